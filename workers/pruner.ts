import type { Orm } from '../src/db/orm.ts';
import { pruneExpired, type Pruned } from '../src/db/retention.ts';
import type { Logger } from '../src/logging/logger.ts';

export interface Pruner {
  /** Prunes now (the loop also does this every interval); resolves with what was deleted. */
  runOnce(): Promise<Pruned>;
  close(): void;
}

/**
 * Every worker process prunes command results, spent nonces and published
 * outbox rows past the retry window, and expired prepared actions, once at
 * start and then every `intervalMs`. Several workers
 * pruning at once only delete the same old rows; nothing else depends on them.
 */
export function startPruner(orm: Orm, logger: Logger, intervalMs: number, clock: () => Date = () => new Date()): Pruner {
  const runOnce = async () => {
    const deleted = await pruneExpired(orm.em.fork(), clock());
    if (Object.values(deleted).some((count) => count > 0))
      logger.info(deleted, 'pruned rows past the retry window and expired prepared actions');
    return deleted;
  };
  const tick = () => runOnce().catch((error: unknown) => logger.warn({ err: error }, 'pruning failed; will try again'));
  const first = setTimeout(tick, 1000).unref();
  const timer = setInterval(tick, intervalMs).unref();
  return {
    runOnce,
    close: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
