import { Migration } from '@mikro-orm/migrations';

/**
 * A project's events in id order: polls filtered by projectSlug alone
 * (events?projectSlug=&since=) walk this index instead of collecting and
 * sorting every event of the project on each read.
 */
export class M0010LedgerProjectOrder extends Migration {
  override up(): void {
    this.addSql('create index if not exists "ledger_event_project_event" on "ledger_event" ("project_slug", "event_id");');
  }

  override down(): void {
    this.addSql('drop index if exists "ledger_event_project_event";');
  }
}
