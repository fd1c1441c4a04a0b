import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { deleteKeys } from '../test/support/testApp.ts';
import { openOrm } from '../src/db/orm.ts';
import { Client } from '../test/support/client.ts';
import { cpuBetween, snapshot, type ProcessGroup } from './processCpu.ts';

/** The service under load, in its own processes, on a database of its own. */
export interface BenchTarget {
  client: Client;
  url: string;
  databaseUrl: string;
  /** The service's processes; in the single layout one process is both roles (counted as api). */
  pids: Record<'api' | 'worker', number[]>;
  stop(): Promise<void>;
}

async function asAdmin(databaseUrl: string, statements: string[]): Promise<void> {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const admin = await openOrm(url.toString(), { poolMax: 1 });
  for (const statement of statements) await admin.em.fork().execute(statement);
  await admin.close();
}

async function freshDatabase(baseUrl: string, name: string): Promise<string> {
  await asAdmin(baseUrl, [`drop database if exists "${name}" with (force)`, `create database "${name}"`]);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(databaseUrl: string): Promise<void> {
  await asAdmin(databaseUrl, [`drop database if exists "${new URL(databaseUrl).pathname.slice(1)}" with (force)`]);
}

/** A port nothing listens on now, so that two bench runs on one machine never answer each other's load. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `split` runs the api role and `workers` worker processes apart (as
 * deployed at scale); `single` runs `npm start`'s one process with both roles.
 */
export async function startTarget(layout: 'single' | 'split', extraEnv: Record<string, string> = {}, workers = 1): Promise<BenchTarget> {
  const port = await freePort();
  // A database of its own per run, dropped at the end: runs may overlap on one machine.
  const databaseName = `agora_bench_${randomBytes(4).toString('hex')}`;
  const databaseUrl = await freshDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/forum', databaseName);
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `bench-${randomBytes(4).toString('hex')}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT_SCALE: '1000000',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'error',
    // Worker-only processes would all claim the default metrics port.
    METRICS_PORT: '0',
    ...extraEnv,
  };
  const roles = layout === 'single' ? ['all'] : [...Array.from({ length: workers }, () => 'worker'), 'api'];
  const children: ChildProcess[] = [];
  for (const role of roles) {
    const child = spawn(process.execPath, ['src/main.ts', role], { env, stdio: ['ignore', process.env.BENCH_LOG_LEVEL ? 'inherit' : 'ignore', 'inherit'] });
    // A role that dies at start (port taken, bad settings) must stop the run, not leave it timing out.
    child.once('exit', (code) => {
      if (code !== 0 && code !== null) throw new Error(`the ${role} process exited with code ${code}`);
    });
    children.push(child);
    // Migrations run on start; let the first process finish them before the next starts.
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
  const url = `http://127.0.0.1:${port}`;
  const client = new Client(url);
  for (let i = 0; i < 100; i++) {
    if ((await client.get('/readyz').catch(() => null))?.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const pidsOf = (role: string) => children.filter((_, i) => roles[i] === role).map((c) => c.pid ?? 0);
  return {
    client,
    url,
    pids: { api: [...pidsOf('api'), ...pidsOf('all')], worker: pidsOf('worker') },
    databaseUrl,
    stop: async () => {
      for (const child of children) child.removeAllListeners('exit').kill('SIGTERM');
      await Promise.all(children.map((c) => new Promise((resolve) => c.once('exit', resolve))));
      const redis = new Redis(env.REDIS_URL);
      await deleteKeys(redis, `${env.REDIS_PREFIX}:*`);
      await redis.quit();
      await dropDatabase(databaseUrl);
    },
  };
}

export interface BenchRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface BenchResult {
  name: string;
  requests: number;
  requestsPerSecond: number;
  p50: number;
  p95: number;
  p99: number;
  errors: number;
  /** CPU milliseconds per completed request, per process group, over the load window. */
  cpuPerRequest: Record<ProcessGroup, number>;
  /** Postgres work per completed request (pg_stat counters of the bench database). */
  pgPerRequest: PgWork;
}

/** Cumulative Postgres counters of one database: commits, rows written, index and sequential scans. */
export interface PgWork {
  commits: number;
  inserted: number;
  updated: number;
  indexScans: number;
  seqScans: number;
}

async function pgWork(databaseUrl: string): Promise<PgWork> {
  const orm = await openOrm(databaseUrl, { poolMax: 1 });
  try {
    const [row] = await orm.em.fork().execute<Record<keyof PgWork, string>[]>(
      `select (select xact_commit from pg_stat_database where datname = current_database()) as commits,
              sum(n_tup_ins) as inserted, sum(n_tup_upd) as updated, sum(coalesce(idx_scan, 0)) as "indexScans", sum(seq_scan) as "seqScans"
         from pg_stat_user_tables`,
    );
    return { commits: Number(row?.commits), inserted: Number(row?.inserted), updated: Number(row?.updated), indexScans: Number(row?.indexScans), seqScans: Number(row?.seqScans) };
  } finally {
    await orm.close();
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Drives the target with autocannon; `next` builds each request. Answers of 400 and above count as errors (a 304 is a success). */
export async function load(name: string, target: Pick<BenchTarget, 'url' | 'pids' | 'databaseUrl'>, next: () => BenchRequest, options: { connections: number; seconds: number }): Promise<BenchResult> {
  const url = target.url;
  const latencies: number[] = [];
  const pgBefore = await pgWork(target.databaseUrl);
  const before = snapshot(target.pids);
  let failed = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: options.connections,
        duration: options.seconds,
        requests: [{ setupRequest: (request) => ({ ...request, ...next() }) }],
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    instance.on('response', (_client, status, _bytes, responseTime) => {
      latencies.push(responseTime);
      if (status >= 400) failed++;
    });
  });
  const cpu = cpuBetween(before, snapshot(target.pids));
  // Backends publish their counters when idle, at most once a second.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const pgAfter = await pgWork(target.databaseUrl);
  latencies.sort((a, b) => a - b);
  const completed = result.requests.total;
  const perRequest = (ms: number) => (completed > 0 ? ms / completed : 0);
  return {
    name,
    requests: completed,
    requestsPerSecond: Math.round(completed / options.seconds),
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    errors: failed + result.errors + result.timeouts,
    cpuPerRequest: { api: perRequest(cpu.api), worker: perRequest(cpu.worker), postgres: perRequest(cpu.postgres), redis: perRequest(cpu.redis) },
    pgPerRequest: Object.fromEntries(Object.entries(pgAfter).map(([k, v]) => [k, perRequest(v - pgBefore[k as keyof PgWork])])) as unknown as PgWork,
  };
}

export function report(results: BenchResult[]): void {
  console.log('| scenario | requests | req/s | p50 ms | p95 ms | p99 ms | errors | CPU ms/req: api | worker | postgres | redis |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const cpu = r.cpuPerRequest;
    console.log(
      `| ${r.name} | ${r.requests} | ${r.requestsPerSecond} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.errors} | ${cpu.api.toFixed(3)} | ${cpu.worker.toFixed(3)} | ${cpu.postgres.toFixed(3)} | ${cpu.redis.toFixed(3)} |`,
    );
  }
  console.log('\n| scenario | Postgres per request: commits | rows inserted | rows updated | index scans | seq scans |');
  console.log('|---|---|---|---|---|---|');
  for (const r of results) {
    const pg = r.pgPerRequest;
    console.log(`| ${r.name} | ${pg.commits.toFixed(2)} | ${pg.inserted.toFixed(2)} | ${pg.updated.toFixed(2)} | ${pg.indexScans.toFixed(2)} | ${pg.seqScans.toFixed(3)} |`);
  }
}
