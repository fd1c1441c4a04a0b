import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { connectRedis, subscribeKept, warnIfRedisMayEvict } from '../src/redis.ts';
import { createLogger } from '../src/logging/logger.ts';
import { startOwnRedis } from '../scripts/chaos/services.ts';
import { until } from './support/until.ts';

async function policyWarnings(evictionPolicy: string): Promise<{ policy: string | null; lines: string[] }> {
  const server = await startOwnRedis(evictionPolicy);
  const lines: string[] = [];
  const connection = connectRedis({ redisUrl: server.url, redisClusterNodes: [] }, 'policy-check');
  try {
    const policy = await warnIfRedisMayEvict(
      connection,
      createLogger({ logLevel: 'info' }, { write: (line: string) => void lines.push(line) }),
    );
    return { policy, lines };
  } finally {
    connection.disconnect();
    await server.stop();
    server.cleanUp();
  }
}

describe('Redis eviction policy at start', () => {
  it('warns in the log when Redis may evict keys', async () => {
    const { policy, lines } = await policyWarnings('allkeys-lru');
    expect(policy).toBe('allkeys-lru');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 40, maxmemoryPolicy: 'allkeys-lru' });
  });

  it('says nothing when the policy is noeviction', async () => {
    const { policy, lines } = await policyWarnings('noeviction');
    expect(policy).toBe('noeviction');
    expect(lines).toEqual([]);
  });
});

describe('a subscriber connection', () => {
  it('is subscribed again after Redis restarts, and closing it as it comes back rejects nothing unhandled', async () => {
    const server = await startOwnRedis();
    const target = { redisUrl: server.url, redisClusterNodes: [] };
    const subscriber = connectRedis(target, 'subscriber-test', 'subscriber');
    const publisher = connectRedis(target, 'publisher-test');
    const errors: Error[] = [];
    subscriber.on('error', (error: Error) => errors.push(error));
    publisher.on('error', () => {});
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const heard: string[] = [];
      subscriber.on('message', (_channel: string, message: string) => heard.push(message));
      await subscribeKept(subscriber, 'news');
      await server.restart();
      await new Promise((resolve) => subscriber.once('ready', resolve));
      await until(
        async () => {
          await publisher.publish('news', 'after the restart');
          return heard.includes('after the restart');
        },
        10_000,
        'a message published after the restart',
      );

      await server.restart();
      // Closed as it is ready again, its socket gone at once: the resubscription in flight never hears back.
      subscriber.once('ready', () => {
        subscriber.disconnect();
        (subscriber as Redis).stream.destroy();
      });
      await new Promise((resolve) => subscriber.once('end', resolve));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(unhandled).toEqual([]);
      expect(errors.map((error) => error.message)).toContain('Connection is closed.');
    } finally {
      process.off('unhandledRejection', onUnhandled);
      subscriber.disconnect();
      publisher.disconnect();
      await server.stop();
      server.cleanUp();
    }
  }, 30_000);
});
