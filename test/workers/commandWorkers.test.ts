import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { redisKeys } from '../../src/redis.ts';
import { createPost, newTopic } from '../support/forum.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();

describe('a worker delivering a batch', () => {
  it('answers a post only once its event is in the ledger and the head announced, and never raises the dirty mark for it', async () => {
    const topic = await newTopic(t.client);
    const keys = redisKeys(t.settings.redisPrefix);
    // Every command Redis runs, on a connection of its own: the dirty mark's writes are counted from the post on.
    const monitor = await new Redis(t.settings.redisUrl).monitor();
    const marked: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[1] === keys.outboxDirty && args[0]?.toLowerCase() === 'set') marked.push(args[2] ?? '');
    });
    try {
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
      // A batch of posts publishes its own events with its commit: no outbox row of it ever waits, so it marks nothing.
      expect(marked).toEqual([]);
    } finally {
      monitor.disconnect();
    }
  });
});
