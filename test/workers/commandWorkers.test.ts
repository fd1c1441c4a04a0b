import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisKeys } from '../../src/redis.ts';
import { createPost, newTopic } from '../support/forum.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();

/** Every command Redis runs while `during` runs (MONITOR, on a connection of its own), as its arguments. */
async function commandsDuring(during: () => Promise<void>): Promise<string[][]> {
  const monitor = await new Redis(t.settings.redisUrl).monitor();
  const seen: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[]) => seen.push(args));
  try {
    await during();
  } finally {
    monitor.disconnect();
  }
  return seen;
}

describe('a worker delivering a batch', () => {
  it('answers a post only once its event is in the ledger and the head announced, and never raises the dirty mark for it', async () => {
    const topic = await newTopic(t.client);
    const keys = redisKeys(t.settings.redisPrefix);
    const commands = await commandsDuring(async () => {
      const reply = await createPost(t.client, topic.owner, topic);
      // Read right after the reply: the batch published with its commit and announced before replying.
      const [event] = await t.orm.em
        .fork()
        .execute<{ event_id: string }[]>(
          "select event_id::text as event_id from ledger_event where type = 'post.created' and subject_id = ?",
          [reply.id],
        );
      const head = await t.redis.get(keys.ledgerHead);
      expect(event).toBeDefined();
      expect(BigInt(head ?? '0')).toBeGreaterThanOrEqual(BigInt(event?.event_id ?? 'x'));
    });
    // A batch of posts publishes its own events with its commit: no outbox row of it ever waits, so it marks nothing.
    expect(commands.filter((args) => args[0]?.toLowerCase() === 'set' && args[1] === keys.outboxDirty)).toEqual([]);
  });

  it('answers a batch without asking Redis whether it still holds the job, while the job’s lock is fresh', async () => {
    const topic = await newTopic(t.client);
    const commands = await commandsDuring(async () => {
      await createPost(t.client, topic.owner, topic);
    });
    // BullMQ's extendLock names the job's lock key first; the lock BullMQ takes when it hands out the job is a SET inside its script.
    const lockChecks = commands.filter((args) => args[0]?.toLowerCase() === 'evalsha' && args[3]?.endsWith(':lock'));
    expect(commands.some((args) => args[0] === 'SET' && args[1]?.endsWith(':lock'))).toBe(true);
    expect(lockChecks).toEqual([]);
  });
});
