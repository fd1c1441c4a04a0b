import type { Queue } from 'bullmq';
import type { Logger } from '../src/logging/logger.ts';
import { isConnectionError } from '../src/logging/outages.ts';

/**
 * The partition queues past this process's PARTITIONS, watched rather than
 * served: an API started with a larger count (while PARTITIONS changes)
 * fills them, and a worker that served them may have died holding a job.
 * A queue found holding any job is served from then on.
 *
 * Serving all MAX_PARTITIONS queues from the start cost an idle worker and
 * its Redis about a tenth of a core: each served queue is checked for
 * stalled jobs four times a second (docs/benchmarks.md, seventh round).
 * A look here is one counting script per watched queue, once per lock
 * (WORKER_LOCK_MS) but at least once a second: a job in a queue nobody
 * serves yet waits that much longer.
 */
export interface UnservedQueues {
  stop(): void;
}

export function watchUnservedQueues(
  queues: Queue[],
  serve: (queue: Queue) => Promise<void>,
  lockMs: number,
  logger: Logger,
): UnservedQueues {
  const everyMs = Math.min(lockMs, 1000);
  let watched = [...queues];
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;

  const holdsJobs = async (queue: Queue) => {
    const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
    return Object.values(counts).some((n) => n > 0);
  };

  const look = async () => {
    const found = await Promise.all(watched.map((queue) => holdsJobs(queue).catch(() => false)));
    for (const queue of watched.filter((_, i) => found[i])) {
      if (stopped) return;
      await serve(queue);
      watched = watched.filter((other) => other !== queue);
    }
  };

  const schedule = () => {
    if (stopped || watched.length === 0) return;
    timer = setTimeout(() => {
      look()
        .catch((error: Error) => {
          // An outage is reported by the connection's watcher; the next look tries again.
          if (!isConnectionError(error)) logger.error({ err: error }, 'could not look for jobs in the unserved partition queues');
        })
        .finally(schedule);
    }, everyMs);
  };

  schedule();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
