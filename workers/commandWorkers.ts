import { hostname } from 'node:os';
import { Queue, Worker, type Job } from 'bullmq';
import type { Runtime } from '../src/context.ts';
import { failpoint } from '../src/failpoints.ts';
import { isConnectionError, outageOf } from '../src/observability/outages.ts';
import type { Command, CommandBatch } from '../src/pipeline/command.ts';
import { allPartitionQueueNames, MAX_PARTITIONS, queueCounts } from '../src/pipeline/partitions.ts';
import { currentPosition } from '../src/db/replicas.ts';
import { encodeReply } from '../src/pipeline/replies.ts';
import { findResults, GAVE_UP } from '../src/pipeline/results.ts';
import { queuePrefix, type RedisClient } from '../src/redis.ts';
import { settleWithin } from '../src/settle.ts';
import { afterCommitPipeline } from '../src/store/afterCommit.ts';
import type { Stores } from '../src/store/stores.ts';
import { PUBLISH_BATCH, type Publication } from '../src/ledger/publisher.ts';
import { linkCommandTraces, queueTelemetry } from '../src/tracing/queueTracing.ts';
import { executeBatch, type Execution } from './executeBatch.ts';
import { startLedgerPublisher, type LedgerPublisherLoop } from './ledgerPublisher.ts';

const commandIds = (commands: Command[]) => commands.map((c) => c.commandId);

/**
 * One BullMQ worker per partition queue, each queue capped at one active job
 * across every worker process (global concurrency 1): the per-project
 * serialization. A job is a batch: executeBatch applies it in one
 * transaction; after commit, deliver refreshes ETags, stores the retry-key
 * results and replies to the waiting API instances. If the process dies
 * before that, the stalled job runs again, finds its recorded results and
 * replies then.
 */
export class CommandWorkers {
  private readonly runtime: Runtime;
  private readonly stores: Stores;
  private readonly ledger: LedgerPublisherLoop;
  private readonly queues: Queue[] = [];
  /** What the queues and their workers talk to Redis through (src/redis.ts queueConnection). */
  private readonly queueConnection: RedisClient;
  private readonly workers: Worker<CommandBatch>[] = [];
  /** Set by the first close(), so a second one waits for the same drain. */
  private closing: Promise<void> | null = null;

  private constructor(runtime: Runtime, stores: Stores, queueConnection: RedisClient) {
    this.runtime = runtime;
    this.stores = stores;
    this.queueConnection = queueConnection;
    this.ledger = startLedgerPublisher(runtime.orm, runtime.logger, runtime.health, stores.ledgerMarks);
  }

  /** Workers on every partition queue, ready to take jobs. */
  static async start(runtime: Runtime, stores: Stores, queues: RedisClient): Promise<CommandWorkers> {
    const pool = new CommandWorkers(runtime, stores, queues);
    // Every queue, not only the first PARTITIONS: an API with another count may have filled the rest.
    await Promise.all(allPartitionQueueNames(MAX_PARTITIONS).map((name) => pool.listen(name)));
    await Promise.all(pool.workers.map((worker) => worker.waitUntilReady()));
    runtime.metrics.watchQueues(() => queueCounts(pool.queues));
    return pool;
  }

  private async listen(name: string): Promise<void> {
    const { settings, logger } = this.runtime;
    const prefix = queuePrefix(settings);
    const queue = new Queue(name, { connection: this.queueConnection, prefix });
    queue.on('error', () => {}); // reported by the connection's watcher, once per outage
    await queue.setGlobalConcurrency(1);
    this.queues.push(queue);
    const worker = new Worker<CommandBatch>(name, (job) => this.processBatch(job), {
      connection: this.queueConnection,
      prefix,
      concurrency: 1,
      lockDuration: settings.workerLockMs,
      stalledInterval: Math.max(250, Math.floor(settings.workerLockMs / 2)),
      maxStalledCount: 5,
      // Named so the operators' projects page (queue.getWorkers()) shows which process serves a partition.
      name: `${hostname()}:${process.pid}`,
      telemetry: queueTelemetry(),
    });
    // A lost connection is logged once per outage by DependencyHealth (every connection to Redis fails together).
    worker.on('error', (error) => {
      if (!isConnectionError(error)) logger.error({ queue: name, err: error }, 'queue worker error');
    });
    worker.on('failed', (job, error) => this.failed(name, job, error));
    this.workers.push(worker);
  }

  private async processBatch(job: Job<CommandBatch>): Promise<{ applied: number }> {
    const { orm, settings, metrics, logger } = this.runtime;
    const stopTimer = metrics.batchDuration.startTimer();
    linkCommandTraces(job.data);
    metrics.batchSize.observe(job.data.commands.length);
    const mark = await this.stores.ledgerMarks.markDirtyNow();
    const { executions, publication, failures } = await executeBatch(orm.em, settings, job.data.commands, (mode, commands, cause) =>
      logger.info({ mode, commandIds: commandIds(commands), cause: cause.message }, `batch of ${commands.length} applied again (${mode})`),
    );
    failpoint('batch-committed-before-reply');
    await this.deliver(executions, publication, mark);
    failpoint('batch-replied-before-complete');
    stopTimer();
    for (const { command, outcome } of executions) metrics.commands.inc({ type: command.type, outcome });
    // Only the failed commands need another attempt; the rest will answer from processed_command.
    if (failures.length > 0) throw failures[0]?.error ?? new Error('command failed');
    return { applied: executions.length };
  }

  /**
   * After commit, in one Redis round trip whatever the batch size: fresh
   * ETags, tombstones for changed credentials, the announcement of the
   * batch's publication, retry-key results, then one reply per command (a
   * pipeline runs in order, so a client that hears its reply finds all of
   * it in place). With read replicas, first one statement for the WAL
   * position past this commit, recorded in the ETags and for every acting
   * agent before the replies (src/db/replicas.ts).
   *
   * A publication that took less than a full batch left nothing pending
   * that was committed before it, so it clears the batch's own dirty mark
   * (`mark`, unless a later writer replaced it). Otherwise outbox rows may
   * wait: the mark stays, and the ledger publisher is nudged.
   */
  private async deliver(executions: Execution[], publication: Publication | null, mark: string): Promise<void> {
    const { etags, credentials, ledgerMarks, idempotency, positions } = this.stores;
    const drained = publication !== null && publication.count < PUBLISH_BATCH;
    if (!drained) this.ledger.nudge();
    const position = this.runtime.settings.databaseReplicaUrls.length > 0 ? await currentPosition(this.runtime.orm.em.fork()) : null;
    const pipeline = afterCommitPipeline(this.runtime.redis);
    etags.bump(pipeline, executions.flatMap((e) => e.touched), position);
    if (position !== null) positions.record(pipeline, executions.flatMap((e) => (e.command.actor ? [e.command.actor.agentId] : [])), position);
    credentials.expire(pipeline, executions.flatMap((e) => e.expiredCredentials ?? []));
    if (publication) ledgerMarks.publishedIn(pipeline, publication.head, drained ? mark : null, publication.events);
    // Outbox rows may be waiting: event reads take the publishing path until a publisher drains them.
    if (!drained && executions.some((e) => e.outcome === 'applied')) ledgerMarks.markDirty(pipeline);
    for (const { command, result } of executions) {
      if (command.idempotency) idempotency.completeIn(pipeline, command.idempotency.cacheKey, command.idempotency.fingerprint, command.commandId, result);
      pipeline.publish(command.replyTo, encodeReply(command.commandId, result));
    }
    await pipeline.exec();
  }

  private failed(queue: string, job: Job<CommandBatch> | undefined, error: Error): void {
    const { orm, logger, health } = this.runtime;
    const commands = job?.data.commands ?? [];
    // During an outage a failed attempt is expected (BullMQ retries it): a warning, and one outage line for the process.
    const dependency = outageOf(error);
    if (dependency === 'postgres') health.reportFailure(dependency, error, () => orm.em.fork().execute('select 1'));
    logger[dependency ? 'warn' : 'error']({ queue, jobId: job?.id, attempt: job?.attemptsMade, commandIds: commandIds(commands), err: error }, `batch of ${commands.length} failed`);
    if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
      this.giveUp(commands).catch((cause: Error) => logger.error({ queue, commandIds: commandIds(commands), err: cause }, 'could not answer a batch that failed on every attempt'));
    }
  }

  /**
   * Out of attempts: a command that committed anyway gets its real result;
   * one that did not frees its retry key (nothing was applied) and answers 503 now.
   */
  private async giveUp(commands: Command[]): Promise<void> {
    const recorded = await findResults(this.runtime.orm.em.fork(), commandIds(commands));
    for (const command of commands) {
      const result = recorded.get(command.commandId);
      if (!result && command.idempotency) await this.stores.idempotency.release(command.idempotency.cacheKey);
      await this.runtime.redis.publish(command.replyTo, encodeReply(command.commandId, result ?? GAVE_UP));
    }
  }

  /** Finishes the active jobs (in-flight commands complete), then closes the queues and the ledger publisher. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.drain();
    return this.closing;
  }

  private async drain(): Promise<void> {
    const { settings, logger } = this.runtime;
    // Past the lock time, stop waiting for a job stuck on a dead connection: another worker takes it over.
    const outcome = await settleWithin(Promise.all(this.workers.map((w) => w.close())), settings.workerLockMs - 1000, () =>
      logger.warn('queue workers did not finish within the lock time; closing them without waiting'),
    );
    if (outcome === 'late') await Promise.all(this.workers.map((w) => w.close(true)));
    await Promise.all(this.queues.map((q) => q.close()));
    await this.ledger.close();
  }
}
