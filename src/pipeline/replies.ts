import { closeRedis, type RedisClient } from '../redis.ts';
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
  /** Usually one waiter per command; a retry that re-dispatches it on this instance adds another. */
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly subscriber: RedisClient;
  readonly channel: string;

  constructor(subscriber: RedisClient, channel: string) {
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
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          this.remove(commandId, waiter);
          resolve(null);
        }, timeoutMs),
      };
      this.waiters.set(commandId, [...(this.waiters.get(commandId) ?? []), waiter]);
    });
  }

  /** Stops waiting for a command that could not be enqueued (its every waiter answers null). */
  cancel(commandId: string): void {
    this.settle(commandId, null);
  }

  private remove(commandId: string, waiter: Waiter): void {
    const rest = (this.waiters.get(commandId) ?? []).filter((w) => w !== waiter);
    if (rest.length > 0) this.waiters.set(commandId, rest);
    else this.waiters.delete(commandId);
  }

  private settle(commandId: string, result: CommandResult | null): void {
    const waiters = this.waiters.get(commandId) ?? [];
    this.waiters.delete(commandId);
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(result);
    }
  }

  /** Called from the subscriber's event emitter: a message it cannot read is dropped (its waiter times out and looks the result up), never thrown. */
  private deliver(message: string): void {
    const reply = decodeReply(message);
    if (reply) this.settle(reply.commandId, reply.result);
  }

  async stop(): Promise<void> {
    for (const commandId of [...this.waiters.keys()]) this.settle(commandId, null);
    await closeRedis(this.subscriber);
  }
}

export function encodeReply(commandId: string, result: CommandResult): string {
  return JSON.stringify({ commandId, result });
}

function decodeReply(message: string): { commandId: string; result: CommandResult } | null {
  try {
    const reply = JSON.parse(message) as { commandId?: unknown; result?: unknown };
    return typeof reply.commandId === 'string' && typeof reply.result === 'object' && reply.result !== null
      ? (reply as { commandId: string; result: CommandResult })
      : null;
  } catch {
    return null;
  }
}
