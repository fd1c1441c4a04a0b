import { closeRedis, subscribeKept, type RedisClient } from '../redis.ts';
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
    await subscribeKept(this.subscriber, this.channel);
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

  /** Called from the subscriber's event emitter: a message it cannot read is dropped (its waiters time out and look their results up), never thrown. */
  private deliver(message: string): void {
    for (const reply of decodeReplies(message)) this.settle(reply.commandId, reply.result);
  }

  async stop(): Promise<void> {
    for (const commandId of [...this.waiters.keys()]) this.settle(commandId, null);
    await closeRedis(this.subscriber);
  }
}

export interface Reply {
  commandId: string;
  result: CommandResult;
}

/** The replies a worker sends one API instance for one batch, in one message: one publish and one delivery, not one per command. */
export function encodeReplies(replies: Reply[]): string {
  return JSON.stringify({ replies });
}

/** One reply alone, as every API reads it (an API from before batched replies reads only this). */
export function encodeReply(reply: Reply): string {
  return JSON.stringify(reply);
}

const isReply = (reply: unknown): reply is Reply =>
  typeof reply === 'object' &&
  reply !== null &&
  typeof (reply as Reply).commandId === 'string' &&
  typeof (reply as Reply).result === 'object' &&
  (reply as Reply).result !== null;

/** The replies of a message: a batch's, or a single one (encodeReply). */
function decodeReplies(message: string): Reply[] {
  try {
    const parsed = JSON.parse(message) as { replies?: unknown };
    if (Array.isArray(parsed.replies)) return parsed.replies.filter(isReply);
    return isReply(parsed) ? [parsed] : [];
  } catch {
    return [];
  }
}
