import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { batchName } from './batchName.ts';
import type { Command, CommandBatch, CommandResult } from './command.ts';
import { partitionOf, partitionQueueName, queueCounts } from './partitions.ts';
import type { ReplyListener } from './replies.ts';
import type { RedisClient } from '../redis.ts';
import { captureCommandTrace, enqueueTraced, queueTelemetry, type CommandTrace, type TracedBatch } from '../tracing/queueTracing.ts';

export interface DispatcherOptions {
  connection: RedisClient;
  prefix: string;
  partitions: number;
  timeoutMs: number;
  /** How long a partition lingers after a loaded batch is answered, for its clients' next commands (0: never). */
  lingerMs: number;
  replies: ReplyListener;
  /** Looks up a result already committed, for a reply that did not come in time (the actor: whose reads must see it). */
  findResult: (commandId: string, actorAgentId: string | null) => Promise<CommandResult | null>;
}

/** Largest batch one job carries. */
const MAX_BATCH = 128;
/** How long commands wait for the previous batch of their partition before being sent anyway. */
const MAX_HOLD_MS = 250;
/** A batch smaller than this means no load: the commands that follow it leave at once. */
export const LOADED_BATCH = 8;

interface Waiting {
  command: Command;
  sent: (error?: Error) => void;
  /** The request's trace, with tracing on. */
  trace: CommandTrace | undefined;
}

/**
 * Per partition: while a batch this instance sent is still being applied,
 * new commands gather and leave together as the next job. Under light load
 * a command is sent at once (a batch of one); under load the batch size
 * follows the arrival rate, so one transaction and one queue job carry many
 * commands. While a batch is in flight, a command is held at most MAX_HOLD_MS.
 *
 * Once a loaded batch is answered, the partition lingers (at most lingerMs more)
 * until as many commands as it carried have joined those already waiting:
 * its clients' next ones. Without it, under a steady load half of them
 * came back while the other half waited, and every job carried half of the
 * partition's commands, paying its queue scripts, its transaction and its
 * commit for half as many (docs/benchmarks.md, fifth round).
 */
class PartitionLane {
  private readonly queue: Queue;
  private readonly lingerMs: number;
  private buffer: Waiting[] = [];
  private outstanding = 0;
  private sending = false;
  /** The hold's timer while a batch is in flight, the linger's once it is answered. */
  private holdTimer: NodeJS.Timeout | null = null;
  private lastBatchSize = 0;
  /** While lingering: how many waiting commands send the next batch at once. */
  private lingerTarget: number | null = null;

  constructor(queue: Queue, lingerMs: number) {
    this.queue = queue;
    this.lingerMs = lingerMs;
  }

  submit(command: Command): Promise<void> {
    return new Promise((resolve, reject) => {
      this.buffer.push({ command, sent: (error) => (error ? reject(error) : resolve()), trace: captureCommandTrace() });
      this.pump(this.lingerTarget !== null && this.buffer.length >= this.lingerTarget);
    });
  }

  /** The command's result (or its timeout) came back: the batch is that much closer to done. */
  settled(): void {
    this.outstanding = Math.max(0, this.outstanding - 1);
    if (this.outstanding > 0) return;
    if (this.lingerMs === 0 || this.lastBatchSize < LOADED_BATCH || this.buffer.length >= MAX_BATCH) {
      this.pump(true);
      return;
    }
    this.lingerTarget = Math.min(MAX_BATCH, this.buffer.length + this.lastBatchSize);
    this.stopTimer();
    this.sendAfter(this.lingerMs);
  }

  /** Sends what waits, unless a batch is in flight or the lane lingers; `force`: now, whatever holds it (its linger ends). */
  private pump(force: boolean): void {
    if (force) this.lingerTarget = null;
    if (this.sending || this.buffer.length === 0) return;
    if ((this.outstanding > 0 || this.lingerTarget !== null) && !force) {
      if (!this.holdTimer) this.sendAfter(MAX_HOLD_MS);
      return;
    }
    this.stopTimer();
    void this.send(this.buffer.splice(0, MAX_BATCH));
  }

  private sendAfter(ms: number): void {
    this.holdTimer = setTimeout(() => {
      this.holdTimer = null;
      this.pump(true);
    }, ms);
  }

  private stopTimer(): void {
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
  }

  private async send(batch: Waiting[]): Promise<void> {
    this.sending = true;
    this.outstanding += batch.length;
    const data: CommandBatch = { commands: batch.map((w) => w.command) };
    try {
      // No custom jobId: BullMQ dedupes by jobId only while the job exists, and a batch must never be
      // dropped because it shares an id with an older one. Duplicates are stopped by processed_command.
      // Named by its projects, so operators' views count a project's backlog without reading job data.
      const name = batchName(batch.map((w) => w.command.partitionKey));
      // Only a batch with a traced request carries traces: the others cost the worker no span.
      if (queueTelemetry() && batch.some((w) => w.trace)) {
        const traces = batch.map((w) => w.trace ?? {});
        await enqueueTraced(traces, () => this.queue.add(name, { ...data, traces } satisfies TracedBatch<CommandBatch>));
      } else await this.queue.add(name, data);
      this.lastBatchSize = batch.length;
      for (const w of batch) w.sent();
    } catch (error) {
      this.outstanding -= batch.length;
      for (const w of batch) w.sent(error as Error);
    } finally {
      this.sending = false;
      this.pump(false);
    }
  }

  /** Closing: nothing waiting will be sent now, so its requests are answered with the error at once. */
  close(): void {
    this.stopTimer();
    this.lingerTarget = null;
    for (const waiting of this.buffer.splice(0)) waiting.sent(new Error('the dispatcher is closed'));
  }
}

/**
 * The API side of the pipeline: puts a command on its partition queue and
 * waits for the result on this instance's reply channel.
 */
export class Dispatcher {
  private readonly queues: Queue[];
  private readonly lanes: PartitionLane[];
  private readonly options: DispatcherOptions;
  private answerListener: ((partitionKey: string, seconds: number) => void) | null = null;

  constructor(options: DispatcherOptions) {
    this.options = options;
    this.queues = Array.from(
      { length: options.partitions },
      (_, i) =>
        new Queue(partitionQueueName(i), {
          connection: options.connection,
          prefix: options.prefix,
          telemetry: queueTelemetry(),
          defaultJobOptions: {
            attempts: 5,
            backoff: { type: 'exponential', delay: 200 },
            removeOnComplete: { age: 3600, count: 10_000 },
            removeOnFail: { age: 7 * 86_400 },
          },
        }),
    );
    // A lost connection is reported by the connection's own watcher (DependencyHealth); without a
    // listener here BullMQ would print every reconnection error to stderr.
    for (const queue of this.queues) queue.on('error', () => {});
    this.lanes = this.queues.map((q) => new PartitionLane(q, options.lingerMs));
  }

  get replyChannel(): string {
    return this.options.replies.channel;
  }

  findResult(commandId: string, actorAgentId: string | null): Promise<CommandResult | null> {
    return this.options.findResult(commandId, actorAgentId);
  }

  /** Enqueues and waits; null means no result within the timeout (the command may still complete). */
  async dispatch(command: Command): Promise<CommandResult | null> {
    const replies = this.options.replies;
    const lane = this.lanes[partitionOf(command.partitionKey, this.options.partitions)];
    if (!lane) throw new Error('partition out of range');
    const pending = replies.wait(command.commandId, this.options.timeoutMs);
    const handedOver = performance.now();
    try {
      await lane.submit(command);
    } catch (error) {
      replies.cancel(command.commandId);
      throw error;
    }
    const result = await pending;
    lane.settled();
    if (result) this.answerListener?.(command.partitionKey, (performance.now() - handedOver) / 1000);
    return result ?? (await this.findResult(command.commandId, command.actor?.agentId ?? null));
  }

  /** Hears how long each answered command took from being handed to its queue to its result (for per-project latency). */
  observeAnswers(listener: (partitionKey: string, seconds: number) => void): void {
    this.answerListener = listener;
  }

  /** Job counts per partition queue, for operators' dashboards. */
  queueCounts(): Promise<Record<string, Record<string, number>>> {
    return queueCounts(this.queues);
  }

  /** The partition queues themselves, for the operators' dashboard. */
  get partitionQueues(): Queue[] {
    return [...this.queues];
  }

  async close(): Promise<void> {
    for (const lane of this.lanes) lane.close();
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
