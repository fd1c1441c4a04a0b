import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Command, CommandResult } from './command.ts';
import { partitionOf, partitionQueueName } from './partitions.ts';
import type { ReplyListener } from './replies.ts';

export interface DispatcherOptions {
  connection: Redis;
  prefix: string;
  partitions: number;
  timeoutMs: number;
  replies: ReplyListener;
  /** Looks up a result already committed, for a reply that did not come in time. */
  findResult: (commandId: string) => Promise<CommandResult | null>;
}

/**
 * The API side of the pipeline: puts a command on its partition queue and
 * waits for the result on this instance's reply channel.
 */
export class Dispatcher {
  private readonly queues: Queue[];
  private readonly options: DispatcherOptions;

  constructor(options: DispatcherOptions) {
    this.options = options;
    this.queues = Array.from(
      { length: options.partitions },
      (_, i) =>
        new Queue(partitionQueueName(i), {
          connection: options.connection,
          prefix: options.prefix,
          defaultJobOptions: {
            attempts: 5,
            backoff: { type: 'exponential', delay: 200 },
            removeOnComplete: { age: 3600, count: 10_000 },
            removeOnFail: { age: 7 * 86_400 },
          },
        }),
    );
  }

  get replyChannel(): string {
    return this.options.replies.channel;
  }

  findResult(commandId: string): Promise<CommandResult | null> {
    return this.options.findResult(commandId);
  }

  queueFor(partitionKey: string): Queue {
    const queue = this.queues[partitionOf(partitionKey, this.options.partitions)];
    if (!queue) throw new Error('partition out of range');
    return queue;
  }

  /** Enqueues and waits; null means no result within the timeout (the command may still complete). */
  async dispatch(command: Command): Promise<CommandResult | null> {
    const replies = this.options.replies;
    const pending = replies.wait(command.commandId, this.options.timeoutMs);
    try {
      // jobId = commandId: an enqueue retried while the job still exists is not added twice.
      await this.queueFor(command.partitionKey).add(command.type, command, { jobId: command.commandId });
    } catch (error) {
      replies.cancel(command.commandId);
      throw error;
    }
    return (await pending) ?? (await this.findResult(command.commandId));
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
