import { Migration } from '@mikro-orm/migrations';

/**
 * What a command's commit refreshes (its ETag scopes, the credentials it expired), kept with its result: a re-run
 * that finds the result after a crash between commit and after-commit refreshes them too (src/pipeline/results.ts).
 * Nullable, without a default: adding it rewrites no row, and a row without it refreshes nothing, as before.
 */
export class M0015CommandRefreshes extends Migration {
  override up(): void {
    this.addSql('alter table "processed_command" add column if not exists "refreshes" jsonb;');
  }

  override down(): void {
    this.addSql('alter table "processed_command" drop column if exists "refreshes";');
  }
}
