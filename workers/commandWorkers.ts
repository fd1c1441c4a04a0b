import { hostname } from 'node:os';
import { type Job, Queue, Worker } from 'bullmq';
import type { Runtime } from '../src/context.ts';
import { failpoint } from '../src/failpoints.ts';
import { isConnectionError, outageOf } from '../src/logging/outages.ts';
import type { Command, CommandBatch } from '../src/pipeline/command.ts';
import { allPartitionQueueNames, MAX_PARTITIONS, queueCounts } from '../src/pipeline/partitions.ts';
import { pingPostgres } from '../src/db/probes.ts';
import { commitPosition, queueRefreshes } from '../src/store/commitRefreshes.ts';
import { encodeReplies, encodeReply, type Reply } from '../src/pipeline/replies.ts';
import { findResults, GAVE_UP } from '../src/pipeline/results.ts';
import { queuePrefix, type RedisClient } from '../src/redis.ts';
import { settleWithin } from '../src/settle.ts';
import { afterCommitPipeline } from '../src/store/afterCommit.ts';
import { PENDING_CLAIM_TTL_SECONDS } from '../src/store/idempotencyStore.ts';
import type { Stores } from '../src/store/stores.ts';
import { PUBLISH_BATCH, type Publication } from '../src/ledger/publication.ts';
import { linkCommandTraces, queueTelemetry } from '../src/tracing/queueTracing.ts';
import { executeBatch, type Execution } from './executeBatch.ts';
import { LockLostError, processingStarts, stillHolds } from './jobLock.ts';
import { startLedgerPublisher, type LedgerPublisherLoop } from './ledgerPublisher.ts';
import { watchUnservedQueues, type UnservedQueues } from './unservedQueues.ts';

const commandIds = (commands: Command[]) => commands.map((c) => c.commandId);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A job waits out an outage for as long as its retry key stays claimed for it: until then, a retry by its client can still be answered. */
const OUTAGE_HORIZON_MS = PENDING_CLAIM_TTL_SECONDS * 1000;
const OUTAGE_BACKOFF_MS = { first: 200, max: 500 };

/**
 * One BullMQ worker per served partition queue (workers/unservedQueues.ts),
 * each queue capped at one active job across every worker process (global
 * concurrency 1): the per-project serialization. A job is a batch:
 * executeBatch applies it in one transaction; after commit, deliver
 * refreshes ETags, stores the retry-key results and replies to the waiting
 * API instances. If the process dies before that, the stalled job runs
 * again, finds its recorded results and replies then.
 *
 * Takeover: a job's lock lasts WORKER_LOCK_MS (1 s by default), renewed every
 * half of that while the job runs; every worker checks the queues it serves
 * for jobs whose lock lapsed every quarter of it, so a killed worker's job runs
 * again on another within about 1.25 s (plus one look, at most 1 s, in a queue
 * no other worker serves yet). A worker frozen past its lock checks it still
 * holds the job before it answers anything (fenced: the project locks and
 * processed_command keep its writes to once, this its replies).
 *
 * Outages: a command that meets an unreachable Postgres or Redis is applied again with backoff inside the
 * same job, not failed, until the dependency is back (OUTAGE_HORIZON_MS at most, or until the process drains).
 */
export class CommandWorkers {
  private readonly runtime: Runtime;
  private readonly stores: Stores;
  private readonly ledger: LedgerPublisherLoop;
  /** The partition queues this process serves; the others are watched (unserved), and served once one holds a job. */
  private readonly queues: Queue[] = [];
  private readonly allQueues: Queue[];
  private unserved: UnservedQueues | null = null;
  /** What the queues and their workers talk to Redis through (src/redis.ts queueConnection). */
  private readonly queueConnection: RedisClient;
  private readonly workers: Worker<CommandBatch>[] = [];
  /** Set by the first close(), so a second one waits for the same drain. */
  private closing: Promise<void> | null = null;

  private constructor(runtime: Runtime, stores: Stores, queueConnection: RedisClient) {
    this.runtime = runtime;
    this.stores = stores;
    this.queueConnection = queueConnection;
    const prefix = queuePrefix(runtime.settings);
    this.allQueues = allPartitionQueueNames(MAX_PARTITIONS).map((name) => new Queue(name, { connection: queueConnection, prefix }));
    for (const queue of this.allQueues) queue.on('error', () => {}); // reported by the connection's watcher, once per outage
    this.ledger = startLedgerPublisher(
      runtime.orm,
      runtime.logger,
      runtime.health,
      stores.ledgerMarks,
      runtime.settings.ledgerAnnounceGraceMs,
    );
  }

  /**
   * Workers on this process's PARTITIONS queues, ready to take jobs; the rest of the MAX_PARTITIONS queues are
   * watched, and served once one holds a job: an API with a larger count may have filled it.
   */
  static async start(runtime: Runtime, stores: Stores, queues: RedisClient): Promise<CommandWorkers> {
    const pool = new CommandWorkers(runtime, stores, queues);
    const { partitions, workerLockMs } = runtime.settings;
    await Promise.all(pool.allQueues.slice(0, partitions).map((queue) => pool.listen(queue)));
    await Promise.all(pool.workers.map((worker) => worker.waitUntilReady()));
    pool.unserved = watchUnservedQueues(pool.allQueues.slice(partitions), (queue) => pool.listen(queue), workerLockMs, runtime.logger);
    runtime.metrics.watchQueues(() => queueCounts(pool.queues));
    return pool;
  }

  private async listen(queue: Queue): Promise<void> {
    const { settings, logger } = this.runtime;
    await queue.setGlobalConcurrency(1);
    // Closing began meanwhile: the drain has taken the workers it closes already.
    if (this.closing) return;
    const worker = new Worker<CommandBatch>(queue.name, (job, token) => this.processBatch(job, token), {
      connection: this.queueConnection,
      prefix: queuePrefix(settings),
      concurrency: 1,
      lockDuration: settings.workerLockMs,
      lockRenewTime: Math.floor(settings.workerLockMs / 2),
      stalledInterval: Math.max(250, Math.floor(settings.workerLockMs / 4)),
      // Short locks lapse under a long pause too (a loaded machine, a frozen VM); such a job is run again, fenced, not failed.
      maxStalledCount: 20,
      // Named so the operators' projects page (queue.getWorkers()) shows which process serves a partition.
      name: `${hostname()}:${process.pid}`,
      telemetry: queueTelemetry(),
    });
    // A lost connection is logged once per outage by DependencyHealth (every connection to Redis fails together).
    worker.on('error', (error) => {
      if (isConnectionError(error)) return;
      // A worker that was frozen past its lock hears so when it wakes: expected, the job is done elsewhere.
      const lockLost = /lock/i.test(error.message);
      logger[lockLost ? 'warn' : 'error'](
        { queue: queue.name, err: error },
        lockLost ? 'a job was taken over by another worker' : 'queue worker error',
      );
    });
    worker.on('failed', (job, error) => this.failed(queue.name, job, error));
    this.queues.push(queue);
    this.workers.push(worker);
  }

  private async processBatch(job: Job<CommandBatch>, token: string | undefined): Promise<{ applied: number }> {
    const { metrics } = this.runtime;
    const stopTimer = metrics.batchDuration.startTimer();
    processingStarts(job);
    linkCommandTraces(job.data);
    metrics.batchSize.observe(job.data.commands.length);
    let pending = job.data.commands;
    let applied = 0;
    for (let attempt = 0; ; attempt++) {
      let outage: Error;
      try {
        const failures = await this.applyAndDeliver(job, token, pending);
        applied += pending.length - failures.length;
        if (failures.length === 0) break;
        // Only the failed commands need another attempt; the rest will answer from processed_command.
        const bug = failures.find((failure) => !isConnectionError(failure.error));
        if (bug) throw bug.error;
        pending = failures.map((failure) => failure.command);
        outage = failures[0]?.error as Error;
      } catch (error) {
        if (!isConnectionError(error)) throw error;
        outage = error as Error;
      }
      await this.waitOutOutage(job, token, attempt, outage);
    }
    stopTimer();
    return { applied };
  }

  /** One attempt at `commands`: apply them, then answer what was applied; returns the commands that failed. */
  private async applyAndDeliver(job: Job<CommandBatch>, token: string | undefined, commands: Command[]) {
    const { orm, settings, metrics, logger } = this.runtime;
    const { executions, publication, failures } = await executeBatch(orm.em, settings, commands, {
      onRetry: (mode, retried, cause) =>
        logger.info({ mode, commandIds: commandIds(retried), cause: cause.message }, `batch of ${retried.length} applied again (${mode})`),
      beforeOutboxWrites: () => this.stores.ledgerMarks.markDirtyNow(),
    });
    failpoint('batch-committed-before-reply');
    // Frozen past the lock, this worker may find its job done by another: it answered, so this one must not.
    if (!(await stillHolds(job, token, this.runtime.settings.workerLockMs, this.queues))) throw new LockLostError(job.id);
    await this.deliver(executions, publication);
    failpoint('batch-replied-before-complete');
    for (const { command, outcome } of executions) metrics.commands.inc({ type: command.type, outcome });
    return failures;
  }

  /**
   * Before the next attempt during an outage: back off (doubling, at most 0.5 s,
   * so a job resumes within half a second of the dependency's return), then go on
   * only while the job is still this worker's, the process is not draining
   * and a retry of the command could still be answered.
   */
  private async waitOutOutage(job: Job<CommandBatch>, token: string | undefined, attempt: number, outage: Error): Promise<void> {
    const { orm, health, logger } = this.runtime;
    const dependency = outageOf(outage);
    if (dependency === 'postgres') health.reportFailure(dependency, outage, () => pingPostgres(orm));
    if (attempt === 0)
      logger.warn(
        { jobId: job.id, dependency, err: { message: outage.message } },
        'batch met an outage; retrying until the dependency is back',
      );
    if (this.closing !== null || Date.now() - job.timestamp > OUTAGE_HORIZON_MS) throw outage;
    await pause(Math.min(OUTAGE_BACKOFF_MS.first * 2 ** attempt, OUTAGE_BACKOFF_MS.max));
    // Redis down too: the lock cannot be checked now; the check before any answer still fences.
    if (!(await stillHolds(job, token, this.runtime.settings.workerLockMs, this.queues).catch(() => true))) throw new LockLostError(job.id);
  }

  /**
   * After commit, in one Redis round trip whatever the batch size: fresh
   * ETags, tombstones for changed credentials, the announcement of the
   * batch's publication, retry-key results, then the replies, one message
   * per API instance (a pipeline runs in order, so a client that hears its
   * reply finds all of it in place). With read replicas, first one statement for the WAL
   * position past this commit, recorded in the ETags and for every acting
   * agent before the replies (src/db/replicas.ts).
   *
   * A publication that took less than a full batch left nothing pending
   * that was committed before it: it is announced, and nothing is marked.
   * Otherwise outbox rows may wait, or a replayed command's events were
   * committed by an attempt that died before announcing them: the dirty
   * mark is set (again) and the ledger publisher nudged, whose drained
   * round clears it.
   */
  private async deliver(executions: Execution[], publication: Publication | null): Promise<void> {
    const { ledgerMarks, idempotency, positions } = this.stores;
    const drained = publication !== null && publication.count < PUBLISH_BATCH;
    if (!drained) this.ledger.nudge();
    const position = await commitPosition(this.runtime.settings, this.runtime.orm.em.fork());
    const pipeline = afterCommitPipeline(this.runtime.redis);
    queueRefreshes(
      pipeline,
      this.stores,
      { touched: executions.flatMap((e) => e.touched), expiredCredentials: executions.flatMap((e) => e.expiredCredentials ?? []) },
      position,
    );
    if (position !== null)
      positions.record(
        pipeline,
        executions.flatMap((e) => (e.command.actor ? [e.command.actor.agentId] : [])),
        position,
      );
    if (publication) ledgerMarks.publishedIn(pipeline, publication.head, publication.events);
    // Event reads then take the Postgres path until a publisher drains the outbox: a writer reads its own events.
    if (!drained && executions.some((e) => e.outcome !== 'refused')) ledgerMarks.markDirty(pipeline);
    const replies = new Map<string, Reply[]>();
    for (const { command, result } of executions) {
      if (command.idempotency)
        idempotency.completeIn(pipeline, command.idempotency.cacheKey, command.idempotency.fingerprint, command.commandId, result);
      const reply = { commandId: command.commandId, result };
      if (!command.repliesTogether) {
        pipeline.publish(command.replyTo, encodeReply(reply));
        continue;
      }
      const toInstance = replies.get(command.replyTo);
      if (toInstance) toInstance.push(reply);
      else replies.set(command.replyTo, [reply]);
    }
    for (const [channel, sent] of replies) pipeline.publish(channel, encodeReplies(sent));
    await pipeline.exec();
  }

  private failed(queue: string, job: Job<CommandBatch> | undefined, error: Error): void {
    const { orm, logger, health } = this.runtime;
    const commands = job?.data.commands ?? [];
    // During an outage a failed attempt is expected (BullMQ retries it): a warning, and one outage line for the process.
    const dependency = outageOf(error);
    if (dependency === 'postgres') health.reportFailure(dependency, error, () => pingPostgres(orm));
    logger[dependency ? 'warn' : 'error'](
      { queue, jobId: job?.id, attempt: job?.attemptsMade, commandIds: commandIds(commands), err: error },
      `batch of ${commands.length} failed`,
    );
    if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
      this.giveUp(commands).catch((cause: Error) =>
        logger.error({ queue, commandIds: commandIds(commands), err: cause }, 'could not answer a batch that failed on every attempt'),
      );
    }
  }

  /**
   * Out of attempts: a command that committed anyway gets its real result;
   * one that did not frees its retry key (nothing was applied) and answers 503 now.
   */
  private async giveUp(commands: Command[]): Promise<void> {
    const recorded = await findResults(this.runtime.orm.em.fork(), commandIds(commands));
    // Committed by an attempt that never announced its events: a writer hearing its result reads them through Postgres.
    if (recorded.size > 0) await this.stores.ledgerMarks.markDirtyNow();
    for (const command of commands) {
      const result = recorded.get(command.commandId)?.result;
      // One try: the worker cannot know when a retry may take the claim over; if Redis is down, so is the reply below.
      if (!result && command.idempotency) await this.stores.idempotency.release(command.idempotency.cacheKey, Date.now());
      await this.runtime.redis.publish(command.replyTo, encodeReply({ commandId: command.commandId, result: result ?? GAVE_UP }));
    }
  }

  /** Finishes the active jobs (in-flight commands complete), then closes the queues and the ledger publisher. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.drain();
    return this.closing;
  }

  private async drain(): Promise<void> {
    const { settings, logger } = this.runtime;
    // Past the time a client waits for its command, stop waiting for a job stuck on a dead connection:
    // its lock then lapses and another worker takes it over.
    this.unserved?.stop();
    const outcome = await settleWithin(Promise.all(this.workers.map((w) => w.close())), settings.commandTimeoutMs, () =>
      logger.warn('queue workers did not finish within the command timeout; closing them without waiting'),
    );
    if (outcome === 'late') await Promise.all(this.workers.map((w) => w.close(true)));
    await Promise.all(this.allQueues.map((q) => q.close()));
    await this.ledger.close();
  }
}
