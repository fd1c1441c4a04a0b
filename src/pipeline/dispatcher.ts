import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import type { Command, CommandResult } from './command.ts';
import { partitionOf, partitionQueueName, queueCounts } from './partitions.ts';
import type { ReplyListener } from './replies.ts';
import { SendCycle } from './sendCycle.ts';
import type { RedisClient } from '../redis.ts';
import { queueTelemetry } from '../tracing/queueTracing.ts';

export interface DispatcherOptions {
  connection: RedisClient;
  prefix: string;
  partitions: number;
  timeoutMs: number;
  /** How long the lanes linger once a loaded cycle is answered, for its clients' next commands (0: never). */
  lingerMs: number;
  replies: ReplyListener;
  /** Looks up a result already committed, for a reply that did not come in time (the actor: whose reads must see it). */
  findResult: (commandId: string, actorAgentId: string | null) => Promise<CommandResult | null>;
}

/**
 * The API side of the pipeline: puts a command on its partition queue and
 * waits for the result on this instance's reply channel.
 */
export class Dispatcher {
  private readonly queues: Queue[];
  private readonly cycle: SendCycle;
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
    this.cycle = new SendCycle(this.queues, options.lingerMs);
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
    const lane = this.cycle.lane(partitionOf(command.partitionKey, this.options.partitions));
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
    this.cycle.close();
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
