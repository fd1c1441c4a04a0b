import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Job } from 'bullmq';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectRedis, redisKeys } from '../../src/redis.ts';
import { LedgerMarks } from '../../src/store/ledgerMarks.ts';
import { createProject, registerAgent } from '../support/client.ts';
import { createPost, newTopic, postCommand } from '../support/forum.ts';
import { partitionQueue } from '../support/queues.ts';
import { useTestApp } from '../support/testApp.ts';

// The app's worker runs in this process: spies (which still call through) count what it asks of Redis.
const t = useTestApp();
afterEach(() => vi.restoreAllMocks());

describe('a worker delivering a batch', () => {
  it('answers a post only once its event is in the ledger and the head announced, and never raises the dirty mark for it', async () => {
    const topic = await newTopic(t.client);
    const keys = redisKeys(t.settings.redisPrefix);
    const markedBefore = vi.spyOn(LedgerMarks.prototype, 'markDirtyNow');
    const markedAfter = vi.spyOn(LedgerMarks.prototype, 'markDirty');
    const reply = await createPost(t.client, topic.owner, topic);
    // Read right after the reply: the batch published with its commit and announced before replying.
    const [event] = await t.orm.em
      .fork()
      .execute<{ event_id: string }[]>(
        "select event_id::text as event_id from ledger_event where type = 'post.created' and subject_id = ?",
        [reply.id],
      );
    expect(event).toBeDefined();
    expect(BigInt((await t.redis.get(keys.ledgerHead)) ?? '0')).toBeGreaterThanOrEqual(BigInt(event?.event_id ?? 'x'));
    // A batch of posts publishes its own events with its commit: no outbox row of it ever waits, so it marks nothing.
    expect(markedBefore).not.toHaveBeenCalled();
    expect(markedAfter).not.toHaveBeenCalled();
  });

  it('marks the outbox dirty before the transaction of a batch that is not all hot, whose outbox rows wait for a publisher', async () => {
    const owner = await registerAgent(t.client);
    const markedBefore = vi.spyOn(LedgerMarks.prototype, 'markDirtyNow');
    // Project creation has no set-based path: its batch runs on the unit of work and leaves its events to a publisher.
    await createProject(t.client, owner);
    expect(markedBefore).toHaveBeenCalled();
  });

  it('answers a batch without asking Redis whether it still holds the job, while the job’s lock is fresh', async () => {
    const topic = await newTopic(t.client);
    const lockChecks = vi.spyOn(Job.prototype, 'extendLock');
    await createPost(t.client, topic.owner, topic);
    expect(lockChecks).not.toHaveBeenCalled();
  });

  it('answers a command from an API before batched replies with a reply of its own, in the form that API reads', async () => {
    const topic = await newTopic(t.client);
    const channel = `${t.settings.redisPrefix}:replies:${randomUUID()}`;
    // As an API from before batched replies enqueues it: no repliesTogether.
    const command = postCommand(topic, channel);
    const listener = connectRedis(t.settings, 'older-api');
    await listener.subscribe(channel);
    const heard = once(listener, 'message');
    const queue = partitionQueue(t.redis, t.settings, topic.projectSlug);
    try {
      await queue.add('batch', { commands: [command] });
      const [, message] = (await heard) as [string, string];
      expect(JSON.parse(message)).toMatchObject({ commandId: command.commandId, result: { status: 200 } });
    } finally {
      await queue.close();
      listener.disconnect();
    }
  });
});
