import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { Redis } from 'ioredis';
import { loadSettings, type Settings } from '../../config/settings.ts';
import { startApp, type AppOptions, type RunningApp } from '../../src/app.ts';
import { openOrm, type Orm } from '../../src/db/orm.ts';
import { Client } from './client.ts';

export interface TestApp {
  app: RunningApp;
  settings: Settings;
  client: Client;
  /** Direct database access, for asserting what was (not) written. */
  orm: Orm;
  redis: Redis;
  stop(): Promise<void>;
}

/** The environment a test app (or a spawned worker process) runs with. */
export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: inject('databaseUrl'),
    REDIS_URL: inject('redisUrl'),
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
export async function startTestApp(env: Record<string, string> = {}, roles: ('api' | 'worker')[] = ['api', 'worker'], options: AppOptions = {}): Promise<TestApp> {
  const settings = loadSettings(testEnv(env));
  const app = await startApp(settings, roles, options);
  const orm = await openOrm(settings.databaseUrl, { poolMax: 2 });
  const redis = new Redis(settings.redisUrl);
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

export async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
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
