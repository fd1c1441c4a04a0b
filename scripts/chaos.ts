/**
 * `npm run chaos`: the fault suite. It starts its own Redis (append-only) and,
 * where it can, its own Postgres cluster; runs the API and two workers as
 * separate processes; drives a write load with retry keys; meanwhile kills
 * workers, kills the API, restarts Redis and restarts Postgres; then checks
 * that nothing acknowledged was lost, nothing applied twice, no 500 was
 * answered, the ledger has no gap and the outbox drained. Exit 0 only then.
 * Loopback only; every process it started is stopped at the end.
 *
 * `npm run chaos -- --topology`: the same load and checks through HAProxy
 * on the whole topology (scripts/topology/topology.ts: Redis Cluster 3+3,
 * Postgres primary + streaming replica, 2 APIs, 2 workers); the faults kill
 * the Redis master holding the queues, one API instance and a worker, stop
 * the replica and restart the primary.
 *
 * CHAOS_SECONDS (default 90) sets the load's length; CHAOS_CLIENTS (default 24) its concurrency.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceProcess } from './chaos/processes.ts';
import { restartAfter, runScenario, type Scenario } from './chaos/run.ts';
import { chaosPostgres, freePort, OwnRedis } from './chaos/services.ts';
import { answersReady, startTopology } from './topology/topology.ts';

const seconds = Number(process.env.CHAOS_SECONDS ?? 90);
const clients = Number(process.env.CHAOS_CLIENTS ?? 24);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const logDir = mkdtempSync(join(tmpdir(), 'agora-chaos-logs-'));
/** Settings that make faults show within a short run. */
const serviceEnv = { RATE_LIMIT_SCALE: '100000', COMMAND_TIMEOUT_MS: '5000', REDIS_PREFIX: 'chaos' };

async function waitReady(base: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await answersReady(base)) return;
    await pause(100);
  }
  throw new Error('the service did not become ready');
}

/** One machine: one Redis, one Postgres, one API, two workers. */
async function single(): Promise<number> {
  const redis = new OwnRedis(await freePort());
  await redis.start();
  const postgres = await chaosPostgres(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/forum');
  const port = await freePort();
  const env = { ...serviceEnv, DATABASE_URL: postgres.url, REDIS_URL: redis.url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', METRICS_PORT: '0' };
  const api = new ServiceProcess('api', env, join(logDir, 'api.log'));
  const workers = [1, 2].map((n) => new ServiceProcess('worker', env, join(logDir, `worker-${n}.log`))) as [ServiceProcess, ServiceProcess];
  const everyone = [api, ...workers];
  emergencyStop = () => {
    for (const service of everyone) service.killNow();
    redis.killNow();
  };
  const base = `http://127.0.0.1:${port}`;
  const shared = postgres.kind === 'shared server' ? ': backends terminated' : '';
  try {
    api.start();
    await waitReady(base);
    for (const worker of workers) worker.start();
    await pause(1500);
    const scenario: Scenario = {
      base,
      databaseUrl: postgres.url,
      setting: `Postgres: ${postgres.kind}, logs in ${logDir}`,
      seconds,
      clients,
      processes: everyone,
      faults: [
        { at: 0.1, name: 'kill worker 1', inject: restartAfter(workers[0], 1000) },
        { at: 0.22, name: 'kill the API', inject: restartAfter(api, 500) },
        { at: 0.36, name: 'restart Redis', inject: () => redis.restart() },
        { at: 0.5, name: `restart Postgres (fast${shared})`, inject: () => postgres.restart('fast') },
        { at: 0.64, name: 'kill worker 2', inject: restartAfter(workers[1], 1000) },
        { at: 0.78, name: `restart Postgres (immediate${shared})`, inject: () => postgres.restart('immediate') },
      ],
    };
    return await runScenario(scenario);
  } finally {
    await Promise.all(everyone.map((p) => p.stop()));
    await redis.stop();
    redis.cleanUp();
    await postgres.stop();
  }
}

/** The topology: everything through HAProxy, faults on every tier. */
async function topology(): Promise<number> {
  const t = await startTopology({ logDir, env: { ...serviceEnv, DRAIN_GRACE_MS: '1000' } });
  emergencyStop = () => {
    for (const pid of t.pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  const queueMaster = t.cluster.masterOf(`{${serviceEnv.REDIS_PREFIX}}`);
  try {
    const scenario: Scenario = {
      base: t.baseUrl,
      databaseUrl: t.serviceEnv.DATABASE_URL as string,
      setting: `through HAProxy to 2 APIs, 2 workers, Redis Cluster 3+3, Postgres primary + streaming replica; logs in ${logDir}`,
      seconds,
      clients,
      processes: [...t.apis, ...t.workers],
      faults: [
        {
          at: 0.1,
          name: `kill the Redis master holding {${serviceEnv.REDIS_PREFIX}} (:${queueMaster.port}; it rejoins as a replica)`,
          inject: async () => {
            await t.cluster.failOver(queueMaster);
            await queueMaster.start();
          },
        },
        { at: 0.3, name: 'kill API 1 behind the balancer', inject: restartAfter(t.apis[0], 1000) },
        { at: 0.45, name: 'kill worker 1', inject: restartAfter(t.workers[0], 1000) },
        { at: 0.6, name: 'stop the Postgres replica (immediate)', inject: () => t.pair.stopReplica() },
        { at: 0.75, name: 'restart the Postgres primary (immediate)', inject: () => t.pair.restartPrimary('immediate') },
      ],
    };
    return await runScenario(scenario);
  } finally {
    await t.stop();
  }
}

/** For the watchdog: kills what was started without waiting. */
let emergencyStop = () => {};

const watchdog = setTimeout(
  () => {
    console.error('chaos: over its time limit; stopping');
    emergencyStop();
    process.exit(2);
  },
  (seconds + 210) * 1000,
).unref();
(process.argv.includes('--topology') ? topology() : single()).then(
  (code) => {
    clearTimeout(watchdog);
    process.exit(code);
  },
  (error: unknown) => {
    console.error('chaos: could not run:', error);
    process.exit(2);
  },
);
