import { describe, expect, it, vi } from 'vitest';
import { redisKeys } from '../../src/redis.ts';
import { executeBatch } from '../../workers/executeBatch.ts';
import { newTopic, postCommand } from '../support/forum.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();

describe('the background ledger publisher', () => {
  it('announces a head that a batch committed but never announced, though no dirty mark is left', async () => {
    const topic = await newTopic(t.client);
    const keys = redisKeys(t.settings.redisPrefix);
    const post = postCommand(topic);
    // The batch as a worker runs it, then dies before its after-commit pipeline: its events are in the ledger, unannounced.
    const { publication } = await executeBatch(t.orm.em, t.settings, [post]);
    // And another batch's drained announcement has cleared the dirty mark meanwhile.
    await t.redis.del(keys.outboxDirty);
    expect(publication).not.toBeNull();
    await vi.waitFor(
      async () => expect(BigInt((await t.redis.get(keys.ledgerHead)) ?? '0')).toBeGreaterThanOrEqual(BigInt(publication?.head ?? 'x')),
      { timeout: 5_000, interval: 50 },
    );
  });
});
