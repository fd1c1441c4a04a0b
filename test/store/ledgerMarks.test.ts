import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { closeRedis, connectRedis, redisKeys } from '../../src/redis.ts';
import { LedgerMarks } from '../../src/store/ledgerMarks.ts';
import { unique } from '../support/client.ts';
import { createPost, newTopic, type TestTopic } from '../support/forum.ts';
import { TcpProxy, targetOf } from '../support/tcpProxy.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const postgres = new TcpProxy(targetOf(inject('databaseUrl'), 5432));
let t: TestApp;
let topic: TestTopic;

beforeAll(async () => {
  await postgres.open();
  t = await startTestApp({ DATABASE_URL: postgres.url(inject('databaseUrl')) });
  topic = await newTopic(t.client);
  await createPost(t.client, topic.owner, topic);
});
afterAll(async () => {
  await postgres.open();
  await t.stop();
  await postgres.close();
});

const poll = (etag?: string) =>
  t.client.get('/api/forum/events', { since: '0', projectSlug: topic.projectSlug }, etag ? { headers: { 'if-none-match': etag } } : {});

async function settledEtag(): Promise<string> {
  // The first polls publish what the setup left in the outbox; then the answer stands still.
  let etag = (await poll()).headers.get('etag') ?? '';
  for (let i = 0; i < 50; i++) {
    const again = await poll(etag);
    if (again.status === 304) return etag;
    etag = again.headers.get('etag') ?? '';
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the events poll never settled');
}

describe('events polls answered from the published ledger head', () => {
  it('answers an unchanged poll 304 without Postgres, even while Postgres is unreachable', async () => {
    const etag = await settledEtag();
    await postgres.close();
    try {
      const during = await poll(etag);
      expect(during.status).toBe(304);
    } finally {
      await postgres.open();
    }
  });

  it('answers 200 with the new event on the first poll after a write is acknowledged', async () => {
    const etag = await settledEtag();
    const post = await createPost(t.client, topic.owner, topic);
    const next = await poll(etag);
    expect(next.status).toBe(200);
    expect(next.body.events.map((e: { subjectId: string }) => e.subjectId)).toContain(post.id);
  });
});

describe('the marks a publication leaves', () => {
  it('returns the marks as its announcement left them: the dirty mark it saw cleared, a newer one kept, the head never lowered', async () => {
    const redis = connectRedis({ redisUrl: inject('redisUrl'), redisClusterNodes: [] }, 'ledger-marks-test');
    const marks = new LedgerMarks(redis, redisKeys(unique('marks')));
    try {
      await marks.markDirtyNow();
      const seen = await marks.read();
      expect(await marks.published('5', seen.dirty)).toEqual({ dirty: null, head: '5' });

      await marks.markDirtyNow();
      const newer = await marks.read();
      expect(await marks.published('4', seen.dirty)).toEqual({ dirty: newer.dirty, head: '5' });
    } finally {
      await closeRedis(redis);
    }
  });
});
