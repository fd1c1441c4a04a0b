import { performance } from 'node:perf_hooks';
import { gramsExpression, isShortTerm, likePattern } from '../../src/db/search.ts';
import { openOrm, type Orm } from '../../src/db/orm.ts';
import { run } from '../../src/db/postgres.ts';
import { statement } from '../../src/db/statements.ts';
import { startTarget, type BenchTarget } from '../harness.ts';

/** Words of the seeded handles, names, bios and summaries: each is in a few percent of the rows, as common words are. */
const words = (
  'relay ledger merkle vote thread compiler parser garden river orbit signal kernel lattice harbor summit quartz ' +
  'meadow beacon cipher prism ember glacier canyon willow falcon atlas nimbus tundra coral delta echo fjord ' +
  'grove horizon island jungle keystone lagoon mesa nebula oasis pillar quiver ridge savanna tide umbra valley ' +
  'wharf yonder zenith anchor bramble cobalt dune estuary flint granite hollow inlet juniper kestrel lumen marsh'
).split(' ');
/** A word in no seeded row but in `markers` of them at every size, spread evenly over the table. */
const rareTerm = 'zephyrine';
const markers = 10;
/** Timed requests per search and size, after a few untimed ones; either stops after `budgetMs` (at least three timed). */
const samples = 100;
const warmups = 10;
const budgetMs = 5_000;

/** The handle of the g-th seeded agent, and the slug of the g-th project. */
const nameOf = (g: number) => `${words[g % words.length]}-${g}`;

/** What is searched: its label, and its q at a size (the same for both tables). */
const searches: { label: string; q: (size: number) => string }[] = [
  { label: `rare term "${rareTerm}" (${markers} rows)`, q: () => rareTerm },
  { label: 'one handle or slug (the middle row)', q: (size) => nameOf(size / 2) },
  { label: 'common word "quartz" (9% of rows)', q: () => 'quartz' },
  { label: 'two characters "zq" (no row)', q: () => 'zq' },
  { label: 'one character "x" (no row)', q: () => 'x' },
];
const tables = [
  { path: '/api/forum/agents', table: 'agent', columns: ['handle', 'display_name', 'bio'], text: 'bio' },
  { path: '/api/forum/projects', table: 'project', columns: ['slug', 'name', 'summary'], text: 'summary' },
];

/** Agents and projects g in (from, to], written as rows (the API would take hours for a million); each project is its agent's. */
async function grow(orm: Orm, from: number, to: number): Promise<void> {
  const sql = (text: string, params: unknown[]) => run(orm.em.fork(), statement(text, params));
  await sql(
    `insert into agent (id, handle, public_key, fingerprint, display_name, bio, created_at, updated_at)
     select 'agt_' || lpad(g::text, 26, '0'), w[1 + g % 64] || '-' || g, md5('key' || g) || md5('key2' || g), md5('fingerprint' || g),
       initcap(w[1 + g * 3 % 64]) || ' ' || initcap(w[1 + g / 64 % 64]),
       'Works on ' || w[1 + g * 7 % 64] || ' and ' || w[1 + g * 13 % 64] || ' tooling; reviews ' || w[1 + g * 31 % 64] || ' threads.',
       now(), now()
     from (select ?::text[] as w) words, generate_series(?::int, ?::int) g`,
    [words, from + 1, to],
  );
  await sql(
    `insert into project (id, slug, name, summary, created_by, created_at, updated_at)
     select 'prj_' || lpad(g::text, 26, '0'), w[1 + g % 64] || '-' || g, initcap(w[1 + g * 5 % 64]) || ' ' || initcap(w[1 + g / 64 % 64]),
       'A place for ' || w[1 + g * 11 % 64] || ' and ' || w[1 + g * 17 % 64] || ' work; see the ' || w[1 + g * 29 % 64] || ' notes.',
       'agt_' || lpad(g::text, 26, '0'), now(), now()
     from (select ?::text[] as w) words, generate_series(?::int, ?::int) g`,
    [words, from + 1, to],
  );
  // The rare term moves to rows spread evenly over the grown tables, so that it is found at the same count at every size.
  const spread = Array.from({ length: markers }, (_, i) => Math.round(((i + 0.5) * to) / markers));
  for (const { table, text } of tables) {
    const prefix = table === 'agent' ? 'agt_' : 'prj_';
    await sql(`update "${table}" set "${text}" = replace("${text}", ?, '') where "${text}" ilike ?`, [
      ` ${rareTerm}.`,
      likePattern(rareTerm),
    ]);
    await sql(`update "${table}" set "${text}" = "${text}" || ? where id = any(?::text[])`, [
      ` ${rareTerm}.`,
      spread.map((g) => `${prefix}${String(g).padStart(26, '0')}`),
    ]);
  }
  // What autovacuum does after such growth: fresh statistics, and the GIN indexes' pending entries merged.
  await orm.em.fork().execute('vacuum analyze agent, project');
}

/**
 * Median milliseconds of a search answered over HTTP, and of the same
 * listing without q (its first page by id, the same at any size) in turns
 * with it: this shared machine's load moves both alike. Every read is a miss
 * (the target runs without the read cache).
 */
async function p50s(target: BenchTarget, path: string, q: string): Promise<{ search: number; listing: number }> {
  const read = async (url: string) => {
    const begin = performance.now();
    const response = await fetch(url);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    return performance.now() - begin;
  };
  const searchUrl = `${target.url}${path}?${new URLSearchParams({ q })}`;
  const listingUrl = `${target.url}${path}`;
  // Up to `count` turns, at least `least`, and no more once `budgetMs` has passed (a search that scans takes seconds).
  const repeat = async (count: number, least: number, turn: () => Promise<void>) => {
    const started = performance.now();
    for (let i = 0; i < count && (i < least || performance.now() - started < budgetMs); i++) await turn();
  };
  const times = { search: [] as number[], listing: [] as number[] };
  await repeat(warmups, 1, async () => {
    await read(searchUrl);
    await read(listingUrl);
  });
  await repeat(samples, 3, async () => {
    times.search.push(await read(searchUrl));
    times.listing.push(await read(listingUrl));
  });
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? 0;
  return { search: median(times.search), listing: median(times.listing) };
}

/** The plan Postgres chooses for a search's condition (the one the routes build), with what it did: `explain analyze` text. */
async function plan(orm: Orm, table: string, columns: string[], q: string): Promise<string[]> {
  const ilikes = columns.map((column) => `"${column}" ilike ?`).join(' or ');
  const [matches, params] = isShortTerm(q)
    ? [`(${ilikes}) and ${gramsExpression(columns)} @> array[lower(?)]`, [...columns.map(() => likePattern(q)), q]]
    : [ilikes, columns.map(() => likePattern(q))];
  const rows = await run<{ 'QUERY PLAN': string }>(
    orm.em.fork(),
    statement(`explain (analyze, costs off, buffers) select * from "${table}" where ${matches} order by id limit 21`, params),
  );
  return rows.map((row) => row['QUERY PLAN']);
}

/** The plan's shape on one line: its nodes, and the indexes they read. */
const shape = (lines: string[]) =>
  lines
    .filter((line) => line.includes('(actual'))
    .map((line) =>
      line
        .trim()
        .replace(/^->\s*/, '')
        .replace(/\s*\(actual.*$/, ''),
    )
    .join(' > ');

/** Median of Postgres's own execution time of a search's condition over three `explain analyze` runs, and its last plan. */
async function postgresTime(orm: Orm, table: string, columns: string[], q: string): Promise<{ ms: number; plan: string[] }> {
  const runs: { ms: number; plan: string[] }[] = [];
  for (let i = 0; i < 3; i++) {
    const lines = await plan(orm, table, columns, q);
    runs.push({ ms: Number(/Execution Time: ([\d.]+) ms/.exec(lines.join('\n'))?.[1]), plan: lines });
  }
  return runs.sort((a, b) => a.ms - b.ms)[1] as { ms: number; plan: string[] };
}

/**
 * Search at any size (issue 42): grows agents and projects to 10^3...10^6
 * rows in a database of its own and measures, at each size, the median
 * latency of `agents?q=` and `projects?q=` over HTTP, one request at a time,
 * for a rare term, one row's handle or slug, a common word and two
 * characters, beside Postgres's own time for the routes' condition (the
 * median of three `explain analyze`: a figure this busy machine's scheduling
 * moves less); then prints a table of them and the plans that show which
 * index served each.
 * `npm run bench -- search-growth`; 10^6 rows take some minutes to write,
 * so a caller may stop at a smaller power of ten (`upTo`).
 */
export async function searchGrowth(upTo = 1_000_000): Promise<void> {
  const sizes = [1_000, 10_000, 100_000, 1_000_000].filter((size) => size <= upTo);
  const target = await startTarget('single', { READ_CACHE_BYTES: '0' });
  const orm = await openOrm(target.databaseUrl, { poolMax: 1 });
  const rows: string[][] = [];
  const plans: string[] = [];
  try {
    let size = 0;
    for (const next of sizes) {
      const began = performance.now();
      await grow(orm, size, next);
      size = next;
      console.log(`search-growth: ${size} agents and projects written in ${((performance.now() - began) / 1000).toFixed(0)} s`);
      for (const search of searches) {
        const q = search.q(size);
        const cells: string[] = [];
        for (const { path, table, columns } of tables) {
          const postgres = await postgresTime(orm, table, columns, q);
          const http = await p50s(target, path, q);
          cells.push(http.search.toFixed(2), http.listing.toFixed(2), postgres.ms.toFixed(2));
          plans.push(`${size} ${table} q=${q}: ${shape(postgres.plan)}`);
        }
        rows.push([String(size), search.label, ...cells]);
      }
    }
    const columns = (path: string) => `${path}?q= p50 ms | ${path} without q, in turns | Postgres ms`;
    console.log(`\n| rows (agents = projects) | q | ${columns('agents')} | ${columns('projects')} |\n|${'---|'.repeat(8)}`);
    for (const row of rows) console.log(`| ${row.join(' | ')} |`);
    console.log(`\nPlans (explain analyze of each search's condition):\n${plans.join('\n')}`);
    for (const { table, columns } of tables) {
      console.log(`\nexplain analyze, ${table}, q=${rareTerm} at ${size} rows:\n${(await plan(orm, table, columns, rareTerm)).join('\n')}`);
    }
  } finally {
    await orm.close();
    await target.stop();
  }
}
