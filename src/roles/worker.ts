import type { Runtime } from '../context.ts';
import { closeRedis, queueConnection } from '../redis.ts';
import { storesOn } from '../store/stores.ts';
import { CommandWorkers } from '../../workers/commandWorkers.ts';
import { startMetricsServer, type MetricsListener } from '../../workers/metricsServer.ts';
import { startPruner } from '../../workers/pruner.ts';

export interface WorkerRole {
  /** Port of the worker-only /metrics listener, when this process runs one. */
  metricsPort: number | null;
  /** Stops pruning and the metrics listener, then drains the queue workers. */
  stop(settle: (name: string, work: Promise<unknown>, ms: number) => Promise<unknown>): Promise<void>;
}

/**
 * The worker role: command workers on the partition queues, the pruner, and
 * (when no API role shares the process to serve it) a /metrics listener of
 * its own. The only assembly that reaches into workers/.
 */
export async function startWorkerRole(runtime: Runtime, withMetricsListener: boolean): Promise<WorkerRole> {
  const { settings, orm, logger } = runtime;
  const queues = queueConnection(settings, runtime.redis, 'agora-worker-queues', 'wait');
  if (queues !== runtime.redis) runtime.health.watchRedis(queues, 'worker queues');
  const workers = await CommandWorkers.start(runtime, storesOn(runtime.redis, settings.redisPrefix), queues);
  const pruner = startPruner(orm, logger, settings.pruneIntervalMs);
  const metrics: MetricsListener | null = withMetricsListener
    ? await startMetricsServer(runtime.metrics, settings.metricsPort, settings.host, settings.operatorToken, logger)
    : null;
  return {
    metricsPort: metrics?.port ?? null,
    stop: async (settle) => {
      if (metrics) await settle('metrics listener', metrics.close(), 2000);
      pruner.close();
      await settle('workers', workers.close(), settings.commandTimeoutMs + 2000);
      if (queues !== runtime.redis) await settle('worker queues connection', closeRedis(queues), 2000);
    },
  };
}
