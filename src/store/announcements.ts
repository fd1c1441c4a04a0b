import { closeRedis, subscribeKept, type RedisClient } from '../redis.ts';

/**
 * An API process's one subscription to what other processes announce over
 * Redis pub/sub (the ledger head's raises, credentials that changed): a
 * connection of its own, since a subscribed connection takes no other
 * commands. It subscribes again after a reconnection; what was
 * announced meanwhile is lost, so every listener has a catch-up of its own
 * (the fan-out's ledger poll, the streams' token recheck).
 */
export class Announcements {
  private readonly subscriber: RedisClient;
  private readonly handlers = new Map<string, (message: string) => void>();

  constructor(subscriber: RedisClient) {
    this.subscriber = subscriber;
    subscriber.on('message', (channel: string, message: string) => this.handlers.get(channel)?.(message));
  }

  async listen(channel: string, onMessage: (message: string) => void): Promise<void> {
    this.handlers.set(channel, onMessage);
    await subscribeKept(this.subscriber, channel);
  }

  async stop(): Promise<void> {
    await closeRedis(this.subscriber);
  }
}
