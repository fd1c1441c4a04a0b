import { Migration } from '@mikro-orm/migrations';

/** The columns `agents?q=` and `projects?q=` match, by table, in the order src/db/search.ts writes them. */
const searched = { agent: ['handle', 'display_name', 'bio'], project: ['slug', 'name', 'summary'] };

/**
 * Searches of one or two characters hold no trigram, so m0012's indexes
 * cannot serve them and each read its whole table. `search_grams` lists the
 * one- and two-character pieces of a text, lower-cased as ILIKE
 * compares; a GIN index over those of a row's searched columns finds the
 * rows that hold a short term (the ILIKE still decides), so a rare one costs
 * what it finds. Common ones (a vowel) are still read along the id order
 * until the page is full, which stops early: the planner weighs both.
 */
export class M0014SearchShortTerms extends Migration {
  override up(): void {
    // Characters by string_to_array, pairs by two regex scans (from the first and from the second character): three
    // C loops, 7-9 times cheaper than a substr() per position. GIN drops duplicate keys itself.
    this.addSql(`
      create or replace function search_grams(value text) returns text[]
        language sql immutable strict parallel safe
        return (
          select string_to_array(v, null)
            || array(select m[1] from regexp_matches(v, '(..)', 'g') as m)
            || array(select m[1] from regexp_matches(substr(v, 2), '(..)', 'g') as m)
            from lower(value) as v);`);
    for (const [table, columns] of Object.entries(searched)) {
      const expression = columns.map((column) => `search_grams("${column}")`).join(' || ');
      this.addSql(`create index if not exists "${table}_search_grams_index" on "${table}" using gin ((${expression}));`);
      // A short term in no row is outside the index's statistics, so at 10^6 rows the planner guessed thousands of
      // matches and started parallel workers: 40 ms of their start-up for a search that found nothing in 0.2 ms.
      // No read of this API wants more than one backend: its pages are read by index and stop at their limit.
      this.addSql(`alter table "${table}" set (parallel_workers = 0);`);
    }
  }

  override down(): void {
    for (const table of Object.keys(searched)) {
      this.addSql(`alter table "${table}" reset (parallel_workers);`);
      this.addSql(`drop index if exists "${table}_search_grams_index";`);
    }
    this.addSql('drop function if exists search_grams(text);');
  }
}
