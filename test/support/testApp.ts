import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { loadSettings, type Settings } from '../../config/settings.ts';
import { startApp, type AppOptions, type RunningApp } from '../../src/app.ts';
import { openOrm, type Orm } from '../../src/db/orm.ts';
import { connectRedis, isCluster, type RedisClient } from '../../src/redis.ts';
import { Client } from './client.ts';

export interface TestApp {
  app: RunningApp;
  settings: Settings;
  client: Client;
  /** Direct database access, for asserting what was (not) written. */
  orm: Orm;
  /** The test's own connection, to the service's Redis (one node, or its cluster). */
  redis: RedisClient;
  stop(): Promise<void>;
}

/** The environment a test app (or a spawned worker process) runs with. */
/**
 * Run against a scaled-out topology (`npm run topology -- up`, then its env):
 * REDIS_CLUSTER_NODES reaches every test app, and each of DATABASE_REPLICA_URLS
 * is pointed at the app's database (this run's, or a test's own), which the replicas stream from the primary.
 */
function topologyEnv(databaseUrl: string): Record<string, string> {
  const env: Record<string, string> = {};
  if (process.env.REDIS_CLUSTER_NODES) env.REDIS_CLUSTER_NODES = process.env.REDIS_CLUSTER_NODES;
  if (process.env.DATABASE_REPLICA_URLS) {
    const database = new URL(databaseUrl).pathname;
    env.DATABASE_REPLICA_URLS = process.env.DATABASE_REPLICA_URLS.split(',')
      .map((replica) => Object.assign(new URL(replica.trim()), { pathname: database }).toString())
      .join(',');
  }
  return env;
}

export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  // A test on a database of its own reads from that database on the replicas too.
  const databaseUrl = overrides.DATABASE_URL ?? inject('databaseUrl');
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: inject('redisUrl'),
    ...topologyEnv(databaseUrl),
    PORT: '0',
    HOST: '127.0.0.1',
    REDIS_PREFIX: `test-${randomBytes(6).toString('hex')}`,
    RATE_LIMIT_SCALE: '100',
    LOG_LEVEL: 'silent',
    METRICS_PORT: '0',
    // A test app has no balancer to wait for; the drain tests set their own grace.
    DRAIN_GRACE_MS: '0',
    ...overrides,
  };
}

/** A whole service (API and workers) in this process, on its own Redis prefix, over real HTTP. */
export async function startTestApp(
  env: Record<string, string> = {},
  roles: ('api' | 'worker')[] = ['api', 'worker'],
  options: AppOptions = {},
): Promise<TestApp> {
  const settings = loadSettings(testEnv(env));
  const app = await startApp(settings, roles, options);
  const orm = await openOrm(settings.databaseUrl, { poolMax: 2 });
  const redis = connectRedis(settings, 'tests');
  // The tests' own connection; outage tests cut it too, and its errors are not the service's.
  redis.on('error', () => {});
  return {
    app,
    settings,
    client: new Client(app.server?.info.uri ?? ''),
    orm,
    redis,
    stop: async () => {
      await app.stop();
      await orm.close();
      await deleteKeys(redis, `${settings.redisPrefix}:*`);
      await redis.quit();
    },
  };
}

/** Every key matching `pattern`, on one Redis or on every reachable master of a cluster (a killed one holds nothing to find). */
export async function keysMatching(redis: RedisClient, pattern: string): Promise<string[]> {
  const found: string[] = [];
  // A cluster client connects to a node on its first command ('wait' until then), so every master it knows is tried;
  // one that cannot be reached (killed by a failover test, not yet dropped from the client's slot map) holds nothing to find.
  const masters = isCluster(redis)
    ? redis.nodes('master').filter((master) => master.status === 'ready' || master.status === 'wait')
    : [redis];
  for (const node of masters) {
    try {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        found.push(...keys);
        cursor = next;
      } while (cursor !== '0');
    } catch (error) {
      if (!isCluster(redis) || node.status !== 'end') throw error;
    }
  }
  return found;
}

export async function deleteKeys(redis: RedisClient, pattern: string): Promise<void> {
  // One key a command: under a cluster the keys live in many slots.
  await Promise.all((await keysMatching(redis, pattern)).map((key) => redis.del(key)));
}

/**
 * The usual file setup in one line: starts a test app before the file's
 * tests and stops it after. The returned object stands for the app once
 * started (it forwards to it), so tests write `t.client`, `t.orm`, ...
 */
export function useTestApp(env: Record<string, string> = {}, roles?: ('api' | 'worker')[], options?: AppOptions): TestApp {
  let started: TestApp | null = null;
  beforeAll(async () => {
    started = await startTestApp(env, roles, options);
  });
  afterAll(async () => {
    await started?.stop();
  });
  return new Proxy({} as TestApp, {
    get(_target, property) {
      if (!started) throw new Error('the test app is used before beforeAll started it');
      return started[property as keyof TestApp];
    },
  });
}
