import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Planner, statementsSentDuring, type PlanNode } from '../support/queryPlans.ts';
import { OwnDatabase } from '../support/ownDatabase.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

/** Agents and projects seeded: enough that reading every row costs the planner more than the trigram indexes. */
const rows = 20_000;
/** Every this many rows one carries the rare term, and LIKE's wildcards and escape character as plain text. */
const markerEvery = 5_000;
const markers = Array.from({ length: rows / markerEvery }, (_, i) => `bulk-${i * markerEvery + markerEvery / 2}`);

const database = new OwnDatabase('search');
let app: TestApp;
let planner: Planner;

/**
 * Each search, its table and the trigram indexes of the columns it matches (src/db/migrations/m0012SearchIndexes.ts);
 * m0014SearchShortTerms's grams index is named after the table.
 */
const searches = [
  {
    path: '/api/forum/agents',
    field: 'handle',
    table: 'agent',
    indexes: ['agent_handle_trgm_index', 'agent_display_name_trgm_index', 'agent_bio_trgm_index'],
  },
  {
    path: '/api/forum/projects',
    field: 'slug',
    table: 'project',
    indexes: ['project_slug_trgm_index', 'project_name_trgm_index', 'project_summary_trgm_index'],
  },
];

beforeAll(async () => {
  await database.create();
  // Started first, it migrates the database; only the API: every statement captured below is one a search sent.
  app = await startTestApp({ DATABASE_URL: database.url, READ_CACHE_BYTES: '0' }, ['api']);
  planner = new Planner(database.url);
  await planner.open();
  const marker = ' Keeps the Zephyrine relay, zq-certified, 100%_done\\here.';
  const marked = `case when g % ${markerEvery} = ${markerEvery / 2} then '${marker}' else '' end`;
  // Words that never spell the rare term, nor hold a wildcard or a backslash.
  await planner.run(`
    create temporary table words as select array['relay', 'ledger', 'merkle', 'garden', 'orbit', 'signal', 'kernel', 'harbor'] w;
    insert into agent (id, handle, public_key, fingerprint, display_name, bio, created_at, updated_at)
      select 'agt_bulk' || lpad(g::text, 8, '0'), 'bulk-' || g, md5('key' || g), md5('fingerprint' || g), initcap(w[1 + g % 8]) || ' ' || g,
        'Writes about ' || w[1 + g * 3 % 8] || ' and ' || w[1 + g * 5 % 8] || '.'
          || ${marked},
        now(), now()
      from words, generate_series(1, ${rows}) g;
    insert into project (id, slug, name, summary, created_by, created_at, updated_at)
      select 'prj_bulk' || lpad(g::text, 8, '0'), 'bulk-' || g, initcap(w[1 + g % 8]) || ' project ' || g,
        'About ' || w[1 + g * 3 % 8] || ' and ' || w[1 + g * 5 % 8] || '.'
          || ${marked},
        'agt_bulk' || lpad(g::text, 8, '0'), now(), now()
      from words, generate_series(1, ${rows}) g;`);
  await planner.run('vacuum analyze agent, project');
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await planner?.close();
  await database.drop();
});

/** The handles or slugs a search answers, over every page. */
async function found(path: string, field: string, q: string): Promise<string[]> {
  const reply = await app.client.get(path, { q, limit: '100' });
  expect(reply.status).toBe(200);
  expect(reply.body.nextCursor).toBeNull();
  return (reply.body[path.endsWith('agents') ? 'agents' : 'projects'] as Record<string, string>[]).map((row) => row[field] ?? '');
}

const byTable = searches.map((search) => [search.table, search] as const);

/**
 * Searches `q` over HTTP, expects the marked rows, and returns the plan of every matching statement it sent: the
 * indexes its Bitmap Index Scans read, and how it read the searched table.
 */
async function plansOfSearch(search: (typeof searches)[number], q: string) {
  let answered: string[] = [];
  const sent = await statementsSentDuring(async () => {
    answered = await found(search.path, search.field, q);
  });
  expect(answered).toEqual(markers);
  const searched = sent.filter((statement) => /\bilike\b/i.test(statement.sql));
  expect(searched.length).toBeGreaterThan(0);
  const plans: { bitmapScans: (string | undefined)[]; tableReads: string[] }[] = [];
  for (const statement of searched) {
    const nodes = (await planner.planOf(statement)) as (PlanNode & { 'Index Name'?: string })[];
    plans.push({
      bitmapScans: nodes.filter((node) => node['Node Type'] === 'Bitmap Index Scan').map((node) => node['Index Name']),
      tableReads: nodes.filter((node) => node['Relation Name'] === search.table).map((node) => node['Node Type']),
    });
  }
  return plans;
}

describe('searches over a seeded service', () => {
  it.each(byTable)('finds a rare term in %s through the trigram index of every column it matches, never a scan', async (_table, search) => {
    for (const { bitmapScans, tableReads } of await plansOfSearch(search, 'ZEPHYRINE')) {
      expect(bitmapScans.sort()).toEqual([...search.indexes].sort());
      expect(tableReads).toEqual(['Bitmap Heap Scan']);
    }
  });

  it.each(byTable)('matches %, _ and \\ in %s as themselves, not as LIKE wildcards or escapes', async (_table, search) => {
    for (const q of ['%', '_', '\\', '0%_d']) expect(await found(search.path, search.field, q)).toEqual(markers);
  });

  it.each(byTable)('finds a rare term of two characters in %s, which holds no trigram, through its grams index', async (table, search) => {
    for (const { bitmapScans, tableReads } of await plansOfSearch(search, 'zQ')) {
      expect(bitmapScans).toEqual([`${table}_search_grams_index`]);
      expect(tableReads).toEqual(['Bitmap Heap Scan']);
    }
  });

  // A prepared statement is planned once for any pattern: after five searches of one or two characters,
  // Postgres may keep a generic plan that reads the whole table in id order for every later search.
  it.each(byTable)('sends searches of %s unprepared, so that each is planned for its own pattern', async (_table, search) => {
    const named: string[] = [];
    const pg = createRequire(import.meta.url)('pg') as {
      Client: { prototype: { query: (config: unknown, ...rest: unknown[]) => unknown } };
    };
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: unknown, config, ...rest) {
      const { text, name } = typeof config === 'object' && config !== null ? (config as { text?: string; name?: string }) : {};
      if (name && text && /\bilike\b/i.test(text)) named.push(name);
      return original.call(this, config, ...rest);
    };
    try {
      for (let i = 0; i < 3; i++) await found(search.path, search.field, 'zephyrine');
    } finally {
      pg.Client.prototype.query = original;
    }
    expect(named).toEqual([]);
  });
});
