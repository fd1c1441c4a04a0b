import { describe, expect, it } from 'vitest';
import { redisKeys } from '../../src/redis.ts';
import { createPost, newTopic } from '../support/forum.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();

describe('a worker delivering a batch', () => {
  it('answers a post only once its event is in the ledger, the head announced and the dirty mark it set cleared', async () => {
    const topic = await newTopic(t.client);
    const keys = redisKeys(t.settings.redisPrefix);
    const reply = await createPost(t.client, topic.owner, topic);
    // Read right after the reply: the batch published with its commit and announced before replying.
    const [event] = await t.orm.em
      .fork()
      .execute<{ event_id: string }[]>(
        "select event_id::text as event_id from ledger_event where type = 'post.created' and subject_id = ?",
        [reply.id],
      );
    const [head, dirty] = await Promise.all([t.redis.get(keys.ledgerHead), t.redis.get(keys.outboxDirty)]);
    expect(event).toBeDefined();
    expect(BigInt(head ?? '0')).toBeGreaterThanOrEqual(BigInt(event?.event_id ?? 'x'));
    expect(dirty).toBeNull();
  });
});
