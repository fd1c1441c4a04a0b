import { Migration } from '@mikro-orm/migrations';

/** Every column that `agents?q=` and `projects?q=` match, by table. */
const searched = { agent: ['handle', 'display_name', 'bio'], project: ['slug', 'name', 'summary'] };

const indexes = Object.entries(searched).flatMap(([table, columns]) =>
  columns.map((column) => ({ table, column, name: `${table}_${column}_trgm_index` })),
);

/**
 * Trigram indexes for the searches: a substring match (`ilike '%q%'`) can
 * use no b-tree, so each search read every row of its table. A GIN trigram
 * index per column serves any pattern of three characters or more (Postgres
 * ORs the columns' bitmaps), so a search costs what it finds, not the
 * table's size (test/db/searchPlans.test.ts, bench/growth/search.ts).
 */
export class M0012SearchIndexes extends Migration {
  override up(): void {
    // pg_trgm ships with Postgres and is a trusted extension: the database's owner may create it.
    this.addSql('create extension if not exists pg_trgm;');
    for (const { table, column, name } of indexes) {
      this.addSql(`create index if not exists "${name}" on "${table}" using gin ("${column}" gin_trgm_ops);`);
    }
  }

  override down(): void {
    for (const { name } of indexes) this.addSql(`drop index if exists "${name}";`);
    // The extension stays: it may have been there before, or serve other objects since.
  }
}
