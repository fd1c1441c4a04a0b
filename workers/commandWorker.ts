import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Settings } from '../config/settings.ts';
import type { Orm } from '../src/db/orm.ts';
import type { Command, CommandBatch } from '../src/pipeline/command.ts';
import { ProcessedCommand } from '../src/entities/processedCommand.ts';
import { allPartitionQueueNames } from '../src/pipeline/partitions.ts';
import { encodeReply } from '../src/pipeline/replies.ts';
import { redisKeys } from '../src/redis.ts';
import { EtagFingerprints } from '../src/store/etagFingerprints.ts';
import { IdempotencyStore } from '../src/store/idempotencyStore.ts';
import { executeBatch, type Execution } from './executeCommand.ts';
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
export async function startCommandWorkers(settings: Settings, orm: Orm, redis: Redis): Promise<CommandWorkers> {
  const keys = redisKeys(settings.redisPrefix);
  const etags = new EtagFingerprints(redis, keys);
  const idempotency = new IdempotencyStore(redis);
  const ledger = startLedgerPublisher(orm, settings);

  const log = (message: string) => {
    if (settings.logLevel !== 'silent') console.error(JSON.stringify({ level: 'error', msg: message }));
  };

  /** After commit: fresh ETags, retry-key results, then one reply per command to the waiting API instance. */
  const deliver = async (executions: Execution[]) => {
    await etags.bump(executions.flatMap((e) => e.touched));
    ledger.nudge();
    const replies = redis.pipeline();
    for (const { command, result } of executions) {
      if (command.idempotency) await idempotency.complete(command.idempotency.cacheKey, command.idempotency.fingerprint, command.commandId, result);
      replies.publish(command.replyTo, encodeReply(command.commandId, result));
    }
    await replies.exec();
  };

  const process = async (job: Job<CommandBatch>): Promise<{ applied: number }> => {
    const { executions, failures } = await executeBatch(orm.em, settings, job.data.commands);
    await deliver(executions);
    // Only the failed commands need another attempt; the rest will answer from processed_command.
    if (failures.length > 0) throw failures[0]?.error ?? new Error('command failed');
    return { applied: executions.length };
  };

  /**
   * Out of attempts: a command that committed anyway gets its real result;
   * one that did not frees its retry key (nothing was applied) and answers 503 now.
   */
  const giveUp = async (commands: Command[]) => {
    const em = orm.em.fork();
    for (const command of commands) {
      const row = await em.findOne(ProcessedCommand, { commandId: command.commandId });
      if (row) {
        await redis.publish(command.replyTo, encodeReply(command.commandId, { status: row.status, body: row.body }));
        continue;
      }
      if (command.idempotency) await idempotency.release(command.idempotency.cacheKey);
      const result = { status: 503, body: { error: { code: 'service_unavailable', message: 'the command failed on every attempt; nothing was applied, retry later' } } };
      await redis.publish(command.replyTo, encodeReply(command.commandId, result));
    }
  };

  const workers: Worker[] = [];
  for (const name of allPartitionQueueNames(settings.partitions)) {
    const queue = new Queue(name, { connection: redis, prefix: settings.redisPrefix });
    await queue.setGlobalConcurrency(1);
    await queue.close();
    const worker = new Worker<CommandBatch>(name, process, {
      connection: redis,
      prefix: settings.redisPrefix,
      concurrency: 1,
      lockDuration: settings.workerLockMs,
      stalledInterval: Math.max(250, Math.floor(settings.workerLockMs / 2)),
      maxStalledCount: 5,
    });
    worker.on('error', (error) => log(`[worker ${name}] ${error.message}`));
    worker.on('failed', (job, error) => {
      log(`[worker ${name}] batch of ${job?.data.commands.length ?? '?'} failed: ${error.message}`);
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) void giveUp(job.data.commands);
    });
    workers.push(worker);
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));

  return {
    // Worker.close() waits for the active job to finish: in-flight commands complete before exit.
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
      await ledger.close();
    },
  };
}
