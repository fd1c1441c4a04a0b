import { randomUUID } from 'node:crypto';
import type { Server } from '@hapi/hapi';
import type { Redis } from 'ioredis';
import type { Settings } from '../config/settings.ts';
import { startCommandWorkers, type CommandWorkers } from '../workers/commandWorker.ts';
import type { ApiContext } from './context.ts';
import { migrate, openOrm, type Orm } from './db/orm.ts';
import { ProcessedCommand } from './entities/processedCommand.ts';
import { createApiServer } from './http/server.ts';
import { Dispatcher } from './pipeline/dispatcher.ts';
import { ReplyListener } from './pipeline/replies.ts';
import { connectRedis, redisKeys } from './redis.ts';
import { EtagFingerprints } from './store/etagFingerprints.ts';
import { IdempotencyStore } from './store/idempotencyStore.ts';
import { RateLimiter } from './store/rateLimiter.ts';

export type Role = 'api' | 'worker';

export interface RunningApp {
  server: Server | null;
  /** Drains: stop accepting, finish in-flight requests and jobs, close connections. */
  stop(): Promise<void>;
}

function logger(settings: Settings) {
  return (error: Error) => {
    if (settings.logLevel !== 'silent') console.error(JSON.stringify({ level: 'error', msg: error.message, stack: error.stack }));
  };
}

async function startApiRole(settings: Settings, orm: Orm, redis: Redis): Promise<{ server: Server; stop: () => Promise<void> }> {
  const keys = redisKeys(settings.redisPrefix);
  const replies = new ReplyListener(connectRedis(settings.redisUrl, 'agora-replies'), keys.replyChannel(randomUUID()));
  await replies.start();
  const dispatcher = new Dispatcher({
    connection: redis,
    prefix: settings.redisPrefix,
    partitions: settings.partitions,
    timeoutMs: settings.commandTimeoutMs,
    replies,
    findResult: async (commandId) => {
      const row = await orm.em.fork().findOne(ProcessedCommand, { commandId });
      return row ? { status: row.status, body: row.body } : null;
    },
  });
  const ctx: ApiContext = {
    settings,
    orm,
    redis,
    keys,
    etags: new EtagFingerprints(redis, keys),
    idempotency: new IdempotencyStore(redis),
    rateLimiter: new RateLimiter(redis),
    dispatcher,
  };
  const server = await createApiServer(ctx, logger(settings));
  await server.start();
  return {
    server,
    stop: async () => {
      await server.stop({ timeout: settings.commandTimeoutMs + 1000 });
      await replies.stop();
      await dispatcher.close();
    },
  };
}

/** Starts the given roles in this process; migrations run first. */
export async function startApp(settings: Settings, roles: Role[]): Promise<RunningApp> {
  const orm = await openOrm(settings.databaseUrl);
  await migrate(orm);
  const redis = connectRedis(settings.redisUrl, 'agora');
  let workers: CommandWorkers | null = null;
  let api: { server: Server; stop: () => Promise<void> } | null = null;
  if (roles.includes('worker')) workers = await startCommandWorkers(settings, orm, redis);
  if (roles.includes('api')) api = await startApiRole(settings, orm, redis);
  return {
    server: api?.server ?? null,
    stop: async () => {
      await api?.stop();
      await workers?.close();
      await redis.quit();
      await orm.close();
    },
  };
}
