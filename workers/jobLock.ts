/**
 * The fence of a job's answers: a worker frozen past its job's lock may find
 * the job started again by another worker, which answers it; this one must
 * then answer nothing (the per-project locks and processed_command keep its
 * writes to once, this keeps its replies to once).
 */
import { Job, type Queue } from 'bullmq';
import type { CommandBatch } from '../src/pipeline/command.ts';

/** Thrown by a worker that finds its job taken over (it was frozen past its lock): it must neither apply nor answer anything more. */
export class LockLostError extends Error {
  constructor(jobId: string | undefined) {
    super(`lost the lock of job ${jobId}: another worker has taken it over`);
    this.name = 'LockLostError';
  }
}

/** When each job's processing started here, by the monotonic clock. */
const startedAt = new WeakMap<object, number>();

/** Called as the processor takes the job. */
export function processingStarts(job: Job<CommandBatch>): void {
  startedAt.set(job, performance.now());
}

/**
 * Whether the job's lock cannot have lapsed yet, so no other worker can have
 * started it again: BullMQ stamps processedOn with this process's clock when
 * it asks Redis for the job, and the lock Redis takes then lasts `lockMs`.
 * Within the first half of that (a batch takes milliseconds) the lock needs
 * no round trip to check; a worker frozen longer asks Redis. The time since
 * processing started here, by the monotonic clock, is a floor: a wall clock
 * stepped back never makes a lock look fresher than that. (A Redis host whose
 * clock jumps forward expires keys early; nothing here can see that.)
 */
function lockSurelyHeld(job: Job<CommandBatch>, lockMs: number): boolean {
  const started = startedAt.get(job);
  if (job.processedOn === undefined || started === undefined) return false;
  return Math.max(Date.now() - job.processedOn, performance.now() - started) < lockMs / 2;
}

/**
 * Whether the job is still this worker's to answer; a job run without a token (tests) always is. Past the first half
 * of its lock, asked of Redis (renewing the lock). A lock that lapsed in a pause nobody acted on yet (the job not started
 * again, not finished) still is: answering then is the first answer, and refusing would only make the client wait for a
 * re-run. A job another worker started again (BullMQ counts every start in attemptsStarted), or one finished or removed
 * meanwhile, is not.
 */
export async function stillHolds(job: Job<CommandBatch>, token: string | undefined, lockMs: number, queues: Queue[]): Promise<boolean> {
  if (token === undefined || lockSurelyHeld(job, lockMs)) return true;
  if ((await job.extendLock(token, lockMs)) === 1) return true;
  const queue = queues.find((q) => q.name === job.queueName);
  const stored = queue ? await Job.fromId<CommandBatch>(queue, job.id as string) : undefined;
  if (!stored || stored.attemptsStarted !== job.attemptsStarted) return false;
  return !['completed', 'failed'].includes(await stored.getState());
}
