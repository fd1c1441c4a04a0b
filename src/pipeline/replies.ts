import type { Redis } from 'ioredis';
import type { CommandResult } from './command.ts';

interface Waiter {
  resolve: (result: CommandResult | null) => void;
  timer: NodeJS.Timeout;
}

/**
 * One Redis pub/sub channel per API instance carries the results of the
 * commands this instance enqueued. Cheaper than QueueEvents, where every
 * reader parses every event of its queue (taskforcesh/bullmq#2341).
 */
export class ReplyListener {
  private readonly waiters = new Map<string, Waiter>();
  private readonly subscriber: Redis;
  readonly channel: string;

  constructor(subscriber: Redis, channel: string) {
    this.subscriber = subscriber;
    this.channel = channel;
  }

  async start(): Promise<void> {
    this.subscriber.on('message', (_channel: string, message: string) => this.deliver(message));
    await this.subscriber.subscribe(this.channel);
  }

  /** Resolves with the result, or null when none came within `timeoutMs`. */
  wait(commandId: string, timeoutMs: number): Promise<CommandResult | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(commandId);
        resolve(null);
      }, timeoutMs);
      this.waiters.set(commandId, { resolve, timer });
    });
  }

  cancel(commandId: string): void {
    const waiter = this.waiters.get(commandId);
    if (!waiter) return;
    clearTimeout(waiter.timer);
    this.waiters.delete(commandId);
  }

  private deliver(message: string): void {
    const { commandId, result } = JSON.parse(message) as { commandId: string; result: CommandResult };
    const waiter = this.waiters.get(commandId);
    if (!waiter) return;
    clearTimeout(waiter.timer);
    this.waiters.delete(commandId);
    waiter.resolve(result);
  }

  async stop(): Promise<void> {
    for (const [id, waiter] of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(null);
      this.waiters.delete(id);
    }
    await this.subscriber.quit();
  }
}

export function encodeReply(commandId: string, result: CommandResult): string {
  return JSON.stringify({ commandId, result });
}
