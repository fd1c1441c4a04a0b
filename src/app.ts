import type { Server } from '@hapi/hapi';
import type { DestinationStream } from 'pino';
import type { Settings } from '../config/settings.ts';
import type { Runtime } from './context.ts';
import { migrate, openOrm } from './db/orm.ts';
import { outboxLag } from './db/probes.ts';
import { createLogger, type Logger } from './logging/logger.ts';
import { Metrics } from './operator/metrics.ts';
import { DependencyHealth } from './logging/outages.ts';
import { closeRedis, connectRedis, warnIfRedisMayEvict } from './redis.ts';
import { startApiRole, type ApiRole } from './roles/api.ts';
import { startWorkerRole, type WorkerRole } from './roles/worker.ts';
import { settleWithin } from './settle.ts';

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

/** Starts the given roles in this process (src/roles/); migrations run first. */
export async function startApp(settings: Settings, roles: Role[], options: AppOptions = {}): Promise<RunningApp> {
  const logger = createLogger(settings, options.logDestination);
  const health = new DependencyHealth(logger);
  const orm = await openOrm(settings.databaseUrl);
  await migrate(orm);
  const redis = connectRedis(settings, 'agora');
  health.watchRedis(redis, 'main');
  await warnIfRedisMayEvict(redis, logger);
  const runtime: Runtime = { settings, orm, redis, logger, metrics: new Metrics(), health };
  runtime.metrics.watchLedgerLag(() => outboxLag(orm));

  // The API serves /metrics itself; a worker-only process needs its own listener.
  const worker: WorkerRole | null = roles.includes('worker') ? await startWorkerRole(runtime, !roles.includes('api')) : null;
  const api: ApiRole | null = roles.includes('api') ? await startApiRole(runtime) : null;
  return {
    server: api?.server ?? null,
    metricsPort: worker?.metricsPort ?? null,
    logger,
    // Each step is bounded: a connection that hangs after an outage must not keep the process from exiting.
    stop: async () => {
      const step = (name: string, work: Promise<unknown>, ms: number) =>
        settleWithin(work, ms, () => logger.warn({ step: name, ms }, 'shutdown step timed out; going on'));
      if (api) await step('api', api.stop(), settings.drainGraceMs + settings.commandTimeoutMs + 2000);
      await worker?.stop(step);
      await step('redis', closeRedis(redis), 2000);
      // Requests aborted by their clients can still be queued for a pool connection.
      await step('database pool', orm.close(), 5000);
      health.close();
    },
  };
}
