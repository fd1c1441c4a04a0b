import { randomUUID } from 'node:crypto';
import type { Server } from '@hapi/hapi';
import type { DestinationStream } from 'pino';
import type { Settings } from '../config/settings.ts';
import { startCommandWorkers, type CommandWorkers } from '../workers/commandWorker.ts';
import { startMetricsServer, type MetricsListener } from '../workers/metricsServer.ts';
import { startPruner, type Pruner } from '../workers/pruner.ts';
import type { ApiContext, Runtime } from './context.ts';
import { migrate, openOrm, type Orm } from './db/orm.ts';
import { drainAndStop } from './http/drain.ts';
import { createApiServer } from './http/server.ts';
import { createLogger, type Logger } from './observability/logger.ts';
import { Metrics, type OutboxLag } from './observability/metrics.ts';
import { DependencyHealth } from './observability/outages.ts';
import { Dispatcher } from './pipeline/dispatcher.ts';
import { ReplyListener } from './pipeline/replies.ts';
import { findResult } from './pipeline/results.ts';
import { closeRedis, connectRedis, redisKeys, redisReady, warnIfRedisMayEvict } from './redis.ts';
import { CredentialCache } from './store/credentialCache.ts';
import { EtagFingerprints } from './store/etagFingerprints.ts';
import { LedgerMarks } from './store/ledgerMarks.ts';
import { IdempotencyStore } from './store/idempotencyStore.ts';
import { RateLimiter } from './store/rateLimiter.ts';

export type Role = 'api' | 'worker';

export interface RunningApp {
  server: Server | null;
  /** Port of the worker-only /metrics listener, when this process runs one. */
  metricsPort: number | null;
  logger: Logger;
  /** Drains: stop accepting, finish in-flight requests and jobs, close connections. */
  stop(): Promise<void>;
}

export interface AppOptions {
  /** Where log lines go (stdout when absent); tests read them from here. */
  logDestination?: DestinationStream;
}


/** Waits for `work` at most `ms`; past that, tells `onTimeout` and returns (the work goes on unawaited). */
async function settleWithin(work: Promise<unknown>, ms: number, onTimeout: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
    timer.unref();
  });
  const outcome = await Promise.race([work.then(() => 'done' as const, () => 'done' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late') onTimeout();
}

async function outboxLag(orm: Orm): Promise<OutboxLag> {
  const [row] = await orm.em
    .fork()
    .execute<{ pending: string; age: number | null }[]>('select count(*)::text as pending, extract(epoch from now() - min(created_at))::float8 as age from outbox_event where published_at is null');
  return { pending: Number(row?.pending ?? 0), oldestAgeSeconds: Math.max(0, row?.age ?? 0) };
}

async function startApiRole(runtime: Runtime): Promise<{ server: Server; stop: () => Promise<void> }> {
  const { settings, orm } = runtime;
  const keys = redisKeys(settings.redisPrefix);
  const redis = connectRedis(settings.redisUrl, 'agora-api', 'fail-fast');
  runtime.health.watchRedis(redis, 'api');
  await redisReady(redis);
  const subscriber = connectRedis(settings.redisUrl, 'agora-replies');
  runtime.health.watchRedis(subscriber, 'replies');
  const replies = new ReplyListener(subscriber, keys.replyChannel(randomUUID()));
  await replies.start();
  const dispatcher = new Dispatcher({
    connection: redis,
    prefix: settings.redisPrefix,
    partitions: settings.partitions,
    timeoutMs: settings.commandTimeoutMs,
    replies,
    findResult: (commandId) => findResult(orm.em.fork(), commandId),
  });
  runtime.metrics.watchQueues(() => dispatcher.queueCounts());
  const ctx: ApiContext = {
    ...runtime,
    redis,
    keys,
    etags: new EtagFingerprints(redis, keys),
    credentials: new CredentialCache(redis, keys),
    ledgerMarks: new LedgerMarks(redis, keys),
    idempotency: new IdempotencyStore(redis),
    rateLimiter: new RateLimiter(redis),
    dispatcher,
  };
  const server = await createApiServer(ctx);
  await server.start();
  return {
    server,
    stop: async () => {
      await drainAndStop(server, settings.drainGraceMs, settings.commandTimeoutMs + 1000);
      await replies.stop();
      await dispatcher.close();
      await closeRedis(redis);
    },
  };
}

/** Starts the given roles in this process; migrations run first. */
export async function startApp(settings: Settings, roles: Role[], options: AppOptions = {}): Promise<RunningApp> {
  const logger = createLogger(settings, options.logDestination);
  const health = new DependencyHealth(logger);
  const orm = await openOrm(settings.databaseUrl);
  await migrate(orm);
  const redis = connectRedis(settings.redisUrl, 'agora');
  health.watchRedis(redis, 'main');
  await warnIfRedisMayEvict(redis, logger);
  const runtime: Runtime = { settings, orm, redis, logger, metrics: new Metrics(), health };
  runtime.metrics.watchLedgerLag(() => outboxLag(orm));

  let workers: CommandWorkers | null = null;
  let api: { server: Server; stop: () => Promise<void> } | null = null;
  let metricsListener: MetricsListener | null = null;
  let pruner: Pruner | null = null;
  if (roles.includes('worker')) {
    workers = await startCommandWorkers(runtime);
    pruner = startPruner(orm, logger, settings.pruneIntervalMs);
  }
  if (roles.includes('api')) api = await startApiRole(runtime);
  // The API serves /metrics itself; a worker-only process needs its own listener.
  else metricsListener = await startMetricsServer(runtime.metrics, settings.metricsPort, settings.host, settings.operatorToken, logger);
  return {
    server: api?.server ?? null,
    metricsPort: metricsListener?.port ?? null,
    logger,
    // Each step is bounded: a connection that hangs after an outage must not keep the process from exiting.
    stop: async () => {
      const step = (name: string, work: Promise<unknown> | undefined, ms: number) => settleWithin(work ?? Promise.resolve(), ms, () => logger.warn({ step: name, ms }, 'shutdown step timed out; going on'));
      await step('api', api?.stop(), settings.drainGraceMs + settings.commandTimeoutMs + 2000);
      await step('metrics listener', metricsListener?.close(), 2000);
      pruner?.close();
      await step('workers', workers?.close(), settings.workerLockMs);
      await step('redis', closeRedis(redis), 2000);
      // Requests aborted by their clients can still be queued for a pool connection.
      await step('database pool', orm.close(), 5000);
      health.close();
    },
  };
}
