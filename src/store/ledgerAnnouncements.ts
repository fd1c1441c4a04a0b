import { closeRedis, type RedisClient } from '../redis.ts';

/**
 * The API process's one subscription to the ledger head's announcements
 * (LedgerMarks.published publishes every raise): a connection of its own,
 * since a subscribed connection takes no other commands. ioredis subscribes
 * again after a reconnection; what was announced meanwhile is lost, which
 * the fan-out's catch-up covers.
 */
export class LedgerAnnouncements {
  private readonly subscriber: RedisClient;
  private readonly channel: string;

  constructor(subscriber: RedisClient, channel: string) {
    this.subscriber = subscriber;
    this.channel = channel;
  }

  async start(onHead: (head: string) => void): Promise<void> {
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) onHead(message);
    });
    await this.subscriber.subscribe(this.channel);
  }

  async stop(): Promise<void> {
    await closeRedis(this.subscriber);
  }
}
