import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { openOrm, type Orm } from '../../src/db/orm.ts';
import { PUBLISH_BATCH } from '../../src/ledger/publication.ts';
import { publishPending } from '../../src/ledger/publisher.ts';
import { createProject, registerAgent } from '../../test/support/client.ts';
import { startTarget } from '../harness.ts';
import { cpuBetween, snapshot, type Watched } from '../processCpu.ts';
import {
  checkpointOnce,
  distinctRandom,
  latency,
  proofsUnderLoad,
  proofUrls,
  sequential,
  tileFetches,
  type Latency,
  type UnderLoad,
} from './ledgerProbes.ts';

/** Rows written per insert while growing: the outbox never holds more than this pending. */
const CHUNK = 100_000;
/** Proof requests timed one at a time per kind and size (each a different event, or a different first size); a slow route stops after the budget. */
const SAMPLES = 200;
const BUDGET_MS = 30_000;
const TILE_SAMPLES = 100;
/** Clients asking for proofs at once while /readyz is polled, and for how long. */
const CLIENTS = 16;
const LOAD_SECONDS = 5;
const CHECKPOINTS = 5;

/** What one size measured. */
interface Row {
  size: number;
  load: string;
  grow: { insertSeconds: number; publishSeconds: number; publications: number; events: number };
  storage: { rows: number; bytes: number; ledgerBytes: number } | null;
  inclusion: Latency;
  consistency: Latency;
  tile: Latency | null;
  underLoad: UnderLoad;
  /** CPU milliseconds of the API process per request: one at a time, and under load (a machine-independent figure of what each proof costs the event loop). */
  cpu: { inclusion: number; consistency: number; underLoad: number };
  prepare: Latency;
  publish: Latency;
}

/** `measure` with the CPU milliseconds the API process spent meanwhile, per request it made. */
async function perRequestCpu<T>(api: Watched, measure: () => Promise<T>, requests: (result: T) => number): Promise<[T, number]> {
  const before = snapshot(api);
  const result = await measure();
  const n = requests(result);
  return [result, n > 0 ? cpuBetween(before, snapshot(api)).groups.api / n : 0];
}

const sql = <T>(orm: Orm, text: string, params: unknown[] = []) => orm.em.fork().execute<T[]>(text, params);

async function treeSize(orm: Orm, projectSlug: string): Promise<number> {
  const [row] = await sql<{ size: string }>(
    orm,
    'select coalesce(max(leaf_index) + 1, 0)::text as size from ledger_event where project_slug = ?',
    [projectSlug],
  );
  return Number(row?.size ?? 0);
}

/** Publications of `limit` rows by the service's own publisher (publishPending, as the worker and event reads call it) until none is pending. */
async function drain(orm: Orm, limit: number): Promise<number> {
  let publications = 0;
  while (((await publishPending(orm.em, limit, 'wait'))?.count ?? 0) > 0) publications++;
  return publications;
}

/**
 * The project's tree grown to `size` leaves: outbox rows as commands write
 * them (as test/support/ledger.ts seedEvents does), CHUNK at a time, each
 * chunk published by the publisher's own code before the next. Then what
 * autovacuum does after such growth: the tables' statistics and visibility maps.
 */
async function grow(orm: Orm, projectSlug: string, size: number, limit: number): Promise<Row['grow']> {
  let publications = await drain(orm, limit);
  let insertSeconds = 0;
  let publishSeconds = 0;
  let events = 0;
  for (let current = await treeSize(orm, projectSlug); current < size; current = await treeSize(orm, projectSlug)) {
    const count = Math.min(CHUNK, size - current);
    const inserting = performance.now();
    await sql(
      orm,
      `insert into outbox_event (type, project_slug, actor, data, command_id, created_at)
       select 'project.updated', ?, 'seeder', json_build_object('n', n), 'seed', now() from generate_series(1, ?) n`,
      [projectSlug, count],
    );
    const publishing = performance.now();
    publications += await drain(orm, limit);
    insertSeconds += (publishing - inserting) / 1000;
    publishSeconds += (performance.now() - publishing) / 1000;
    events += count;
  }
  const tiles = await hasTiles(orm);
  await sql(orm, `vacuum analyze ledger_event, outbox_event${tiles ? ', ledger_tree_hash' : ''}`);
  return { insertSeconds, publishSeconds, publications, events };
}

async function hasTiles(orm: Orm): Promise<boolean> {
  const [row] = await sql<{ tiles: boolean }>(orm, `select to_regclass('ledger_tree_hash') is not null as tiles`);
  return row?.tiles ?? false;
}

/** ledger_tree_hash's rows of the project and the table's bytes with its index (null before 29cdbbe), beside ledger_event's. */
async function storage(orm: Orm, projectSlug: string): Promise<Row['storage']> {
  if (!(await hasTiles(orm))) return null;
  const [row] = await sql<{ rows: string; bytes: string; ledger: string }>(
    orm,
    `select (select count(*) from ledger_tree_hash where project_slug = ?)::text as rows,
            pg_total_relation_size('ledger_tree_hash')::text as bytes, pg_total_relation_size('ledger_event')::text as ledger`,
    [projectSlug],
  );
  return { rows: Number(row?.rows), bytes: Number(row?.bytes), ledgerBytes: Number(row?.ledger) };
}

/** Event ids of `count` distinct leaves of the project, at random. */
async function randomEvents(orm: Orm, projectSlug: string, size: number, count: number): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    orm,
    'select event_id::text as id from ledger_event where project_slug = ? and leaf_index = any(?::bigint[])',
    // An array literal: em.execute would expand an array parameter into a list of placeholders.
    [projectSlug, `{${distinctRandom(0, size, count).join(',')}}`],
  );
  return rows.map((row) => row.id).sort(() => Math.random() - 0.5);
}

const ms = (value: number) => (value < 10 ? value.toFixed(1) : value.toFixed(0));
const pair = (l: Latency) => `${ms(l.p50)} / ${ms(l.p99)}`;
const kib = (bytes: number) => `${Math.round(bytes / 1024).toLocaleString('en')} KiB`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

function print(rows: Row[], label: string): void {
  console.log(
    `\nledger-growth${label ? ` ${label}` : ''}: proofs one at a time over HTTP (ms, p50 / p99, each request a different event or first size)`,
  );
  console.log(
    '| leaves | inclusion | its API CPU ms | consistency | its API CPU ms | tile/0/N (8 KiB) p50 | checkpoint prepare p50 | publish p50 | load average |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const tile = r.tile ? ms(r.tile.p50) : '—';
    console.log(
      `| ${r.size.toLocaleString('en')} | ${pair(r.inclusion)} | ${r.cpu.inclusion.toFixed(2)} | ` +
        `${pair(r.consistency)} | ${r.cpu.consistency.toFixed(2)} | ${tile} | ${ms(r.prepare.p50)} | ` +
        `${ms(r.publish.p50)} | ${r.load} |`,
    );
  }
  console.log(`\n${CLIENTS} clients asking for proofs at once for ${LOAD_SECONDS} s, /readyz and /healthz polled beside them (ms)`);
  console.log('| leaves | proofs/s | proof p50 / p99 | API CPU per proof | /readyz p50 | /readyz max | /healthz p50 | /healthz max |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const { size, underLoad: u, cpu } of rows) {
    console.log(
      `| ${size.toLocaleString('en')} | ${u.proofsPerSecond.toFixed(0)} | ${pair(u.proof)} | ` +
        `${cpu.underLoad.toFixed(2)} | ${ms(u.readyz.p50)} | ${ms(u.readyz.max)} | ${ms(u.healthz.p50)} | ` +
        `${ms(u.healthz.max)} |`,
    );
  }
  console.log('\nGrowth (outbox rows in SQL, published by publishPending) and storage');
  console.log(
    '| leaves | events added | bench’s publications (the worker’s publisher takes some) | insert s | publish s | ' +
      'events/s published | ledger_tree_hash rows | its bytes | ledger_event bytes |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const { size, grow: g, storage: s } of rows) {
    const stored = s ? `${s.rows.toLocaleString('en')} | ${kib(s.bytes)} | ${kib(s.ledgerBytes)}` : '— | — | —';
    console.log(
      `| ${size.toLocaleString('en')} | ${g.events.toLocaleString('en')} | ${g.publications} | ` +
        `${g.insertSeconds.toFixed(1)} | ${g.publishSeconds.toFixed(1)} | ` +
        `${g.publishSeconds > 0 ? (g.events / g.publishSeconds).toFixed(0) : '—'} | ${stored} |`,
    );
  }
}

export interface LedgerGrowthOptions {
  /** Tree sizes measured, ascending (default 10^3...10^6, or up to LEDGER_GROWTH_UP_TO). */
  sizes?: number[];
  /** Rows per publication while growing (default LEDGER_GROWTH_BATCH, or the publisher's PUBLISH_BATCH). */
  batch?: number;
  /** Names the run in the tables (e.g. the commit measured). */
  label?: string;
}

/**
 * The ledger at any size (issue 42 §6): one project's tree grown to 10^3,
 * 10^4, 10^5 and 10^6 leaves through the publisher's own code, and at each
 * size, over the HTTP API of a running target (read cache off, so every
 * answer is computed): inclusion and consistency proofs one at a time, a
 * full tile, /readyz and /healthz while sixteen clients ask for proofs at
 * once, checkpoint prepare and publish signed by the project's owner, and
 * ledger_tree_hash's rows and bytes. `npm run bench -- ledger-growth`.
 */
export async function ledgerGrowth(options: LedgerGrowthOptions = {}): Promise<void> {
  const upTo = Number(process.env.LEDGER_GROWTH_UP_TO ?? 1_000_000);
  const sizes = options.sizes ?? [1_000, 10_000, 100_000, 1_000_000].filter((size) => size <= upTo);
  const batch = options.batch ?? Number(process.env.LEDGER_GROWTH_BATCH ?? PUBLISH_BATCH);
  const label = options.label ?? '';
  const target = await startTarget('split', { READ_CACHE_BYTES: '0' });
  const orm = await openOrm(target.databaseUrl, { poolMax: 2 });
  const rows: Row[] = [];
  try {
    const owner = await registerAgent(target.client);
    const projectSlug = await createProject(target.client, owner);
    const urls = proofUrls(target.url, projectSlug);
    const api: Watched = { api: target.watched.api, worker: [], postmasters: [], redis: [] };
    console.log(`ledger-growth${label ? ` ${label}` : ''}: project ${projectSlug}, ${batch} rows per publication, load average ${load()}`);
    for (const size of sizes) {
      const grown = await grow(orm, projectSlug, size, batch);
      const actual = await treeSize(orm, projectSlug);
      if (actual !== size) throw new Error(`the tree has ${actual} leaves, not ${size}`);
      console.log(
        `ledger-growth: ${size} leaves (+${grown.events} in ${grown.publications} publications: insert ` +
          `${grown.insertSeconds.toFixed(1)} s, publish ${grown.publishSeconds.toFixed(1)} s); load average ${load()}`,
      );
      const events = await randomEvents(orm, projectSlug, size, Math.min(size, 2_000));
      const firsts = distinctRandom(1, size, Math.min(size - 1, 2_000));
      // Unmeasured first: the JIT and Postgres's caches warm to the routes.
      await sequential([...events.slice(-10).map(urls.inclusion), ...firsts.slice(-10).map(urls.consistency)], BUDGET_MS);
      const samples = (l: Latency) => l.samples;
      const [inclusion, inclusionCpu] = await perRequestCpu(
        api,
        () => sequential(events.slice(0, SAMPLES).map(urls.inclusion), BUDGET_MS),
        samples,
      );
      const [consistency, consistencyCpu] = await perRequestCpu(
        api,
        () => sequential(firsts.slice(0, SAMPLES).map(urls.consistency), BUDGET_MS),
        samples,
      );
      const tile = await tileFetches(target.url, projectSlug, size, TILE_SAMPLES);
      const mixed = events.flatMap((eventId, i) => [urls.inclusion(eventId), urls.consistency(firsts[i % firsts.length] as number)]);
      // The pollers' requests count too: they are few (one per 20 ms each) and cheap.
      const [underLoad, loadCpu] = await perRequestCpu(
        api,
        () => proofsUnderLoad(target.url, mixed, CLIENTS, LOAD_SECONDS),
        (u) => u.proofs,
      );
      const stored = await storage(orm, projectSlug);
      // Each checkpoint is itself an event of the project: the tree grows by one per round (the next size tops it up).
      const checkpoints = [];
      for (let i = 0; i < CHECKPOINTS; i++) checkpoints.push(await checkpointOnce(target.url, owner, projectSlug));
      const row: Row = {
        size,
        load: load(),
        grow: grown,
        storage: stored,
        inclusion,
        consistency,
        tile,
        underLoad,
        cpu: { inclusion: inclusionCpu, consistency: consistencyCpu, underLoad: loadCpu },
        prepare: latency(checkpoints.map((c) => c.prepare)),
        publish: latency(checkpoints.map((c) => c.publish)),
      };
      rows.push(row);
      console.log(
        `ledger-growth: ${size}: inclusion ${pair(inclusion)} ms (${inclusion.samples}), consistency ` +
          `${pair(consistency)} ms (${consistency.samples}), tile ${tile ? ms(tile.p50) : '—'} ms, /readyz under load ` +
          `p50 ${ms(underLoad.readyz.p50)} max ${ms(underLoad.readyz.max)} ms, checkpoint ${ms(row.prepare.p50)} + ` +
          `${ms(row.publish.p50)} ms; load average ${row.load}`,
      );
    }
    print(rows, label);
  } finally {
    await orm.close();
    await target.stop();
  }
}
