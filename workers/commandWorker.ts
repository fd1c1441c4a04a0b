import { Queue, Worker, type Job } from 'bullmq';
import type { Runtime } from '../src/context.ts';
import type { Command, CommandBatch } from '../src/pipeline/command.ts';
import { failpoint } from '../src/failpoints.ts';
import { isConnectionError, outageOf } from '../src/observability/outages.ts';
import { allPartitionQueueNames, queueCounts } from '../src/pipeline/partitions.ts';
import { encodeReply } from '../src/pipeline/replies.ts';
import { findResults, GAVE_UP } from '../src/pipeline/results.ts';
import { redisKeys } from '../src/redis.ts';
import { CredentialCache } from '../src/store/credentialCache.ts';
import { EtagFingerprints } from '../src/store/etagFingerprints.ts';
import { LedgerMarks } from '../src/store/ledgerMarks.ts';
import { IdempotencyStore } from '../src/store/idempotencyStore.ts';
import { executeBatch, type BatchRetryListener, type Execution } from './executeCommand.ts';
import { startLedgerPublisher } from './ledgerPublisher.ts';

export interface CommandWorkers {
  close(): Promise<void>;
}

/**
 * One BullMQ worker per partition queue, each queue capped at one active job
 * across every worker process (global concurrency 1): the per-project
 * serialization. After commit: refresh ETags, store the retry-key result,
 * then reply to the waiting API instance. If the process dies before that,
 * the stalled job runs again, finds its recorded result and replies then.
 */
export async function startCommandWorkers(runtime: Runtime): Promise<CommandWorkers> {
  const { settings, orm, redis, logger, metrics } = runtime;
  const keys = redisKeys(settings.redisPrefix);
  const etags = new EtagFingerprints(redis, keys);
  const credentials = new CredentialCache(redis, keys);
  const ledgerMarks = new LedgerMarks(redis, keys);
  const idempotency = new IdempotencyStore(redis);
  const ledger = startLedgerPublisher(orm, logger, runtime.health, ledgerMarks);
  const commandIds = (commands: Command[]) => commands.map((c) => c.commandId);
  const onRetry: BatchRetryListener = (mode, commands, cause) =>
    logger.info({ mode, commandIds: commandIds(commands), cause: cause.message }, `batch of ${commands.length} applied again (${mode})`);

  /**
   * After commit, in one Redis round trip whatever the batch size: fresh
   * ETags, tombstones for changed credentials, retry-key results, then one reply per command (a pipeline runs in
   * order, so a client that hears its reply finds both already in place).
   */
  const deliver = async (executions: Execution[]) => {
    ledger.nudge();
    const pipeline = redis.pipeline();
    etags.bump(pipeline, executions.flatMap((e) => e.touched));
    credentials.expire(pipeline, executions.flatMap((e) => e.expiredCredentials ?? []));
    // Outbox rows may be waiting: event reads take the publishing path until a publisher drains them.
    if (executions.some((e) => e.outcome === 'applied')) ledgerMarks.markDirty(pipeline);
    for (const { command, result } of executions) {
      if (command.idempotency) idempotency.completeIn(pipeline, command.idempotency.cacheKey, command.idempotency.fingerprint, command.commandId, result);
      pipeline.publish(command.replyTo, encodeReply(command.commandId, result));
    }
    await pipeline.exec();
  };

  const process = async (job: Job<CommandBatch>): Promise<{ applied: number }> => {
    const stopTimer = metrics.batchDuration.startTimer();
    metrics.batchSize.observe(job.data.commands.length);
    await ledgerMarks.markDirtyNow();
    const { executions, failures } = await executeBatch(orm.em, settings, job.data.commands, onRetry);
    failpoint('batch-committed-before-reply');
    await deliver(executions);
    failpoint('batch-replied-before-complete');
    stopTimer();
    for (const { command, outcome } of executions) metrics.commands.inc({ type: command.type, outcome });
    // Only the failed commands need another attempt; the rest will answer from processed_command.
    if (failures.length > 0) throw failures[0]?.error ?? new Error('command failed');
    return { applied: executions.length };
  };

  /**
   * Out of attempts: a command that committed anyway gets its real result;
   * one that did not frees its retry key (nothing was applied) and answers 503 now.
   */
  const giveUp = async (commands: Command[]) => {
    const recorded = await findResults(orm.em.fork(), commands.map((c) => c.commandId));
    for (const command of commands) {
      const result = recorded.get(command.commandId);
      if (!result && command.idempotency) await idempotency.release(command.idempotency.cacheKey);
      await redis.publish(command.replyTo, encodeReply(command.commandId, result ?? GAVE_UP));
    }
  };

  const workers: Worker[] = [];
  const queues: Queue[] = [];
  for (const name of allPartitionQueueNames(settings.partitions)) {
    const queue = new Queue(name, { connection: redis, prefix: settings.redisPrefix });
    queue.on('error', () => {}); // reported by the connection's watcher, once per outage
    await queue.setGlobalConcurrency(1);
    queues.push(queue);
    const worker = new Worker<CommandBatch>(name, process, {
      connection: redis,
      prefix: settings.redisPrefix,
      concurrency: 1,
      lockDuration: settings.workerLockMs,
      stalledInterval: Math.max(250, Math.floor(settings.workerLockMs / 2)),
      maxStalledCount: 5,
    });
    // A lost connection is logged once per outage by DependencyHealth (every connection to Redis fails together).
    worker.on('error', (error) => {
      if (!isConnectionError(error)) logger.error({ queue: name, err: error }, 'queue worker error');
    });
    worker.on('failed', (job, error) => {
      const commands = job?.data.commands ?? [];
      // During an outage a failed attempt is expected (BullMQ retries it): a warning, and one outage line for the process.
      const dependency = outageOf(error);
      if (dependency === 'postgres') runtime.health.reportFailure(dependency, error, () => orm.em.fork().execute('select 1'));
      const level = dependency ? 'warn' : 'error';
      logger[level]({ queue: name, jobId: job?.id, attempt: job?.attemptsMade, commandIds: commandIds(commands), err: error }, `batch of ${commands.length} failed`);
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
        giveUp(job.data.commands).catch((cause: Error) => logger.error({ queue: name, commandIds: commandIds(commands), err: cause }, 'could not answer a batch that failed on every attempt'));
      }
    });
    workers.push(worker);
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  metrics.watchQueues(() => queueCounts(queues));

  return {
    // Worker.close() waits for the active job to finish: in-flight commands complete before exit.
    close: async () => {
      // Past the lock time, stop waiting for a job stuck on a dead connection: another worker takes it over.
      const graceful = Promise.all(workers.map((w) => w.close()));
      const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), settings.workerLockMs - 1000).unref());
      if ((await Promise.race([graceful, late])) === 'late') {
        logger.warn('queue workers did not finish within the lock time; closing them without waiting');
        await Promise.all(workers.map((w) => w.close(true)));
      }
      await Promise.all(queues.map((q) => q.close()));
      await ledger.close();
    },
  };
}
