import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deleteKeys } from '../test/support/testApp.ts';
import { openOrm } from '../src/db/orm.ts';
import { closeRedis, connectRedis } from '../src/redis.ts';
import { Client } from '../test/support/client.ts';
import { freePort } from '../scripts/chaos/services.ts';
import { postmasters, redisCommands, redisNodes } from './engines.ts';
import { cpuBetween, snapshot, type ProcessGroup, type Watched } from './processCpu.ts';

/** The service under load, in its own processes, on a database of its own. */
export interface BenchTarget {
  client: Client;
  url: string;
  databaseUrl: string;
  /** The bench database on each streaming replica (DATABASE_REPLICA_URLS), if any. */
  replicaUrls: string[];
  /** REDIS_URL, or the cluster's seeds (REDIS_CLUSTER_NODES) when set. */
  redisUrl: string;
  clusterSeeds: string[];
  /** The processes whose CPU counts: the service's (in the single layout one process is both roles, counted as api), each Postgres server, each Redis node. */
  watched: Watched;
  stop(): Promise<void>;
}

async function onServer(databaseUrl: string, statement: string): Promise<void> {
  const admin = await openOrm(Object.assign(new URL(databaseUrl), { pathname: '/postgres' }).toString(), { poolMax: 1 });
  try {
    await admin.em.fork().execute(statement);
  } finally {
    await admin.close();
  }
}

async function freshDatabase(baseUrl: string, name: string): Promise<string> {
  await onServer(baseUrl, `create database "${name}"`);
  return Object.assign(new URL(baseUrl), { pathname: `/${name}` }).toString();
}

const dropDatabase = (databaseUrl: string) =>
  onServer(databaseUrl, `drop database if exists "${new URL(databaseUrl).pathname.slice(1)}" with (force)`);

/**
 * Where the engines are: the environment's DATABASE_URL, DATABASE_REPLICA_URLS,
 * REDIS_URL and REDIS_CLUSTER_NODES, or with BENCH_TOPOLOGY=1 those of the
 * topology `npm run topology -- up` started (TOPOLOGY_DIR/state.json).
 */
function engineEnv(): Record<string, string | undefined> {
  if (!process.env.BENCH_TOPOLOGY) return process.env;
  const state = JSON.parse(readFileSync(join(process.env.TOPOLOGY_DIR ?? '.topology', 'state.json'), 'utf8')) as {
    env?: Record<string, string>;
  };
  if (!state.env) throw new Error('BENCH_TOPOLOGY: the topology is not up (npm run topology -- up)');
  return { ...process.env, ...state.env };
}

/**
 * `split` runs the api role and `workers` worker processes apart (as
 * deployed at scale); `single` runs `npm start`'s one process with both roles.
 * BENCH_CPU_PROF=<folder> makes every service process write a V8 CPU profile there when it stops.
 */
export async function startTarget(layout: 'single' | 'split', extraEnv: Record<string, string> = {}, workers = 1): Promise<BenchTarget> {
  // A port and a database of its own: other benches may run on this machine at the same time.
  const port = await freePort();
  const engines = engineEnv();
  const databaseName = `agora_bench_${randomBytes(4).toString('hex')}`;
  const databaseUrl = await freshDatabase(engines.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/forum', databaseName);
  const replicaUrls = (engines.DATABASE_REPLICA_URLS ?? '')
    .split(',')
    .filter(Boolean)
    .map((replica) => Object.assign(new URL(replica), { pathname: `/${databaseName}` }).toString());
  const redisUrl = engines.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const clusterSeeds = (engines.REDIS_CLUSTER_NODES ?? '').split(',').filter(Boolean);
  const env = {
    ...engines,
    DATABASE_URL: databaseUrl,
    DATABASE_REPLICA_URLS: replicaUrls.join(','),
    REDIS_URL: redisUrl,
    REDIS_CLUSTER_NODES: clusterSeeds.join(','),
    REDIS_PREFIX: `bench-${randomBytes(4).toString('hex')}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT_SCALE: '1000000',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'error',
    // Worker-only processes would all claim the default metrics port.
    METRICS_PORT: '0',
    ...extraEnv,
  };
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const roles = layout === 'single' ? ['all'] : [...Array.from({ length: workers }, () => 'worker'), 'api'];
  const children: ChildProcess[] = [];
  for (const role of roles) {
    const child = spawn(process.execPath, [...profile, 'src/bin/main.ts', role], {
      env,
      stdio: ['ignore', process.env.BENCH_LOG_LEVEL ? 'inherit' : 'ignore', 'inherit'],
    });
    // A role that dies at start (port taken, bad settings) must stop the run, not leave it timing out.
    child.once('exit', (code) => {
      if (code !== 0 && code !== null) throw new Error(`the ${role} process exited with code ${code}`);
    });
    children.push(child);
    // However the bench ends, its service processes end with it.
    process.once('exit', () => child.kill('SIGKILL'));
    // Migrations run on start; let the first process finish them before the next starts.
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
  const url = `http://127.0.0.1:${port}`;
  const client = new Client(url);
  // A busy machine may take a while to start the service; a bench must not start before it serves.
  for (let i = 0; (await client.get('/readyz').catch(() => null))?.status !== 200; i++) {
    if (i === 600) throw new Error('the service did not answer /readyz within a minute');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const pidsOf = (role: string) => children.filter((_, i) => roles[i] === role).map((c) => c.pid ?? 0);
  return {
    client,
    url,
    databaseUrl,
    replicaUrls,
    redisUrl,
    clusterSeeds,
    watched: {
      api: [...pidsOf('api'), ...pidsOf('all')],
      worker: pidsOf('worker'),
      postmasters: await postmasters(databaseUrl, replicaUrls),
      redis: await redisNodes(redisUrl, clusterSeeds),
    },
    stop: async () => {
      for (const child of children) child.removeAllListeners('exit').kill('SIGTERM');
      await Promise.all(children.map((c) => new Promise((resolve) => c.once('exit', resolve))));
      const redis = connectRedis(
        {
          redisUrl,
          redisClusterNodes: clusterSeeds.map((seed) => ({ host: seed.split(':')[0] as string, port: Number(seed.split(':')[1]) })),
        },
        'bench',
      );
      await deleteKeys(redis, `${env.REDIS_PREFIX}:*`);
      await deleteKeys(redis, `{${env.REDIS_PREFIX}}:*`);
      await closeRedis(redis);
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
  /** Requests of the background load, if any (not in `requests`, but in the CPU and Postgres figures). */
  backgroundRequests: number;
  /** CPU milliseconds per completed request, per process group, over the load window. */
  cpuPerRequest: Record<ProcessGroup, number>;
  /** Per Redis node (by port): its role, CPU milliseconds and commands executed per completed request. */
  redisPerRequest: { port: number; role: string; cpu: number; commands: number }[];
  /** Postgres work per completed request (pg_stat counters of the bench database on the primary). */
  pgPerRequest: PgWork;
  /** Transactions the replicas committed per completed request (the reads they served). */
  replicaCommitsPerRequest: number;
}

/** Cumulative Postgres counters of one database: commits, rows written, index and sequential scans. */
interface PgWork {
  commits: number;
  inserted: number;
  updated: number;
  /** Updates that added no index entry (heap-only tuples): the others write every index of their table. */
  hotUpdated: number;
  indexScans: number;
  seqScans: number;
}

async function pgWork(databaseUrl: string): Promise<PgWork> {
  const orm = await openOrm(databaseUrl, { poolMax: 1 });
  try {
    const [row] = await orm.em.fork().execute<Record<keyof PgWork, string>[]>(
      `select (select xact_commit from pg_stat_database where datname = current_database()) as commits,
              sum(n_tup_ins) as inserted, sum(n_tup_upd) as updated, sum(n_tup_hot_upd) as "hotUpdated",
              sum(coalesce(idx_scan, 0)) as "indexScans", sum(seq_scan) as "seqScans"
         from pg_stat_user_tables`,
    );
    return {
      commits: Number(row?.commits),
      inserted: Number(row?.inserted),
      updated: Number(row?.updated),
      hotUpdated: Number(row?.hotUpdated),
      indexScans: Number(row?.indexScans),
      seqScans: Number(row?.seqScans),
    };
  } finally {
    await orm.close();
  }
}

/** Commits of every replica (a standby counts its read-only transactions). */
async function replicaCommits(replicaUrls: string[]): Promise<number> {
  const counts = await Promise.all(
    replicaUrls.map(async (url) => {
      const orm = await openOrm(url, { poolMax: 1 });
      try {
        const [row] = await orm.em
          .fork()
          .execute<{ commits: string }[]>('select xact_commit as commits from pg_stat_database where datname = current_database()');
        return Number(row?.commits);
      } finally {
        await orm.close();
      }
    }),
  );
  return counts.reduce((sum, n) => sum + n, 0);
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** A second load beside the measured one (writers at a fixed rate while reads are measured): its requests count only in `backgroundRequests` and its errors. */
export interface Background {
  next: () => BenchRequest;
  rate: number;
  connections: number;
}

/** One autocannon run; `onResponse` sees every answer. */
function drive(
  url: string,
  next: () => BenchRequest,
  options: { connections: number; seconds: number; rate?: number },
  onResponse: (status: number, ms: number) => void,
): Promise<autocannon.Result> {
  return new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: options.connections,
        duration: options.seconds,
        // A fixed arrival rate compares CPU per request at equal load (batch sizes follow the arrival rate).
        ...(options.rate ? { overallRate: options.rate } : {}),
        requests: [{ setupRequest: (request) => ({ ...request, ...next() }) }],
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    instance.on('response', (_client, status, _bytes, responseTime) => onResponse(status, responseTime));
  });
}

/**
 * Drives the target with autocannon, as fast as it answers or at `rate` requests/s; `next` builds each
 * request. Answers of 400 and above count as errors (a 304 is a success).
 */
export async function load(
  name: string,
  target: BenchTarget,
  next: () => BenchRequest,
  options: { connections: number; seconds: number; rate?: number; background?: Background },
): Promise<BenchResult> {
  const url = target.url;
  const latencies: number[] = [];
  const commandsOf = () => redisCommands(target.redisUrl, target.clusterSeeds, target.watched.redis);
  const [pgBefore, replicaBefore, commandsBefore] = await Promise.all([
    pgWork(target.databaseUrl),
    replicaCommits(target.replicaUrls),
    commandsOf(),
  ]);
  const before = snapshot(target.watched);
  let failed = 0;
  const { background } = options;
  const [result, beside] = await Promise.all([
    drive(url, next, options, (status, ms) => {
      latencies.push(ms);
      if (status >= 400) failed++;
    }),
    background
      ? drive(url, background.next, { connections: background.connections, seconds: options.seconds, rate: background.rate }, (status) => {
          if (status >= 400) failed++;
        })
      : null,
  ]);
  const cpu = cpuBetween(before, snapshot(target.watched));
  const commandsAfter = await commandsOf();
  // Backends publish their counters when idle, at most once a second.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const [pgAfter, replicaAfter] = await Promise.all([pgWork(target.databaseUrl), replicaCommits(target.replicaUrls)]);
  latencies.sort((a, b) => a - b);
  const completed = result.requests.total;
  const perRequest = (amount: number) => (completed > 0 ? amount / completed : 0);
  return {
    name,
    requests: completed,
    requestsPerSecond: Math.round(completed / options.seconds),
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    errors: failed + result.errors + result.timeouts + (beside ? beside.errors + beside.timeouts : 0),
    backgroundRequests: beside?.requests.total ?? 0,
    cpuPerRequest: Object.fromEntries(Object.entries(cpu.groups).map(([group, ms]) => [group, perRequest(ms)])) as Record<
      ProcessGroup,
      number
    >,
    redisPerRequest: target.watched.redis.map(({ port, role }) => ({
      port,
      role,
      cpu: perRequest(cpu.labels.get(String(port)) ?? 0),
      commands: perRequest((commandsAfter.get(port) ?? 0) - (commandsBefore.get(port) ?? 0)),
    })),
    pgPerRequest: Object.fromEntries(
      Object.entries(pgAfter).map(([k, v]) => [k, perRequest(v - pgBefore[k as keyof PgWork])]),
    ) as unknown as PgWork,
    replicaCommitsPerRequest: perRequest(replicaAfter - replicaBefore),
  };
}
