import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LedgerEvent } from '../../src/entities/ledgerEvent.ts';
import { encodeAnnouncement } from '../../src/ledger/announcement.ts';
import { LedgerFanout } from '../../src/ledger/fanout.ts';
import { ledgerHead } from '../../src/ledger/publisher.ts';
import { createProject, registerAgent, type TestAgent } from '../support/client.ts';
import { EventStreamReader } from '../support/eventStream.ts';
import { OwnDatabase } from '../support/ownDatabase.ts';
import { createPost, createTopic, type TestTopic } from '../support/forum.ts';
import type { OwnRedis } from '../../scripts/chaos/services.ts';
import { startOwnRedis } from '../../scripts/chaos/services.ts';
import { TcpProxy, targetOf } from '../support/tcpProxy.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

// Two API instances on one database and one redis-server (both this file's own: no other file's events in the
// ledger, and a Redis the file can restart): `writer` (API and workers) takes the posts, `reader` (API only)
// serves the streams, and reaches Redis and Postgres through proxies that can cut them.
const database = new OwnDatabase('fanout');
let ownRedis: OwnRedis;
let redis: TcpProxy;
const postgres = new TcpProxy(targetOf(inject('databaseUrl'), 5432));
let writer: TestApp;
let reader: TestApp;
let author: TestAgent;
let topic: TestTopic;

const readerEnv = () => ({
  REDIS_PREFIX: writer.settings.redisPrefix,
  REDIS_URL: redis.url(ownRedis.url),
  DATABASE_URL: postgres.url(database.url),
  STREAM_CATCH_UP_MS: '200',
});

beforeAll(async () => {
  await database.create();
  ownRedis = await startOwnRedis();
  redis = new TcpProxy(targetOf(ownRedis.url, 6379));
  await redis.open();
  await postgres.open();
  // The batches announce their own events, with them: on a loaded machine their after-commit step can take longer than
  // the publisher's default grace of 100 ms, and the publisher would announce the head alone first.
  writer = await startTestApp({ DATABASE_URL: database.url, REDIS_URL: ownRedis.url, LEDGER_ANNOUNCE_GRACE_MS: '60000' });
  reader = await startTestApp(readerEnv(), ['api']);
  author = await registerAgent(writer.client);
  topic = await createTopic(writer.client, author, await createProject(writer.client, author));
});
afterAll(async () => {
  await redis.open();
  await postgres.open();
  await reader.stop();
  await writer.stop();
  await redis.close();
  await postgres.close();
  await database.drop();
  await ownRedis.stop();
  ownRedis.cleanUp();
});

const head = () => ledgerHead(writer.orm.em.fork());

/** Every id /events holds after `since`, from the writer instance. */
async function polledIds(since: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor = since;
  for (;;) {
    const reply = await writer.client.get('/api/forum/events', { since: cursor, limit: '100' });
    ids.push(...reply.body.events.map((e: { eventId: string }) => e.eventId));
    if (reply.body.nextCursor === null) return ids;
    cursor = reply.body.nextCursor;
  }
}

async function post(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await createPost(writer.client, author, topic);
}

/**
 * Reconnects to the reader from `first`'s last id, posts `count` more, and
 * expects the two streams together to hold exactly what /events holds after
 * `since`: nothing missed, nothing twice.
 */
async function resumeAndCompare(first: EventStreamReader, since: string, count: number): Promise<void> {
  const resumed = await EventStreamReader.open(reader.client.base, {}, { 'last-event-id': first.lastId! });
  try {
    await post(count);
    const expected = await polledIds(since);
    await resumed.until(() => first.events.length + resumed.events.length >= expected.length);
    expect([...first.ids(), ...resumed.ids()]).toEqual(expected);
  } finally {
    resumed.close();
  }
}

describe('one ledger fan-out per API instance', () => {
  it('streams on one instance the events committed through another', async () => {
    const since = await head();
    const stream = await EventStreamReader.open(reader.client.base, { since });
    try {
      await post(3);
      const expected = await polledIds(since);
      await stream.until(() => stream.events.length >= expected.length);
      expect(stream.ids()).toEqual(expected);
    } finally {
      stream.close();
    }
  });

  it('hands on the events announced with their publication without reading them from Postgres', async () => {
    const since = await head();
    const stream = await EventStreamReader.open(reader.client.base, { since });
    await post(1);
    await stream.until(() => stream.events.length >= 1);
    await postgres.close();
    try {
      // The reader cannot reach Postgres: what it streams now came in the announcements.
      await post(3);
      await stream.until(() => stream.events.length >= 4);
    } finally {
      await postgres.open();
      stream.close();
    }
    expect(stream.ids()).toEqual(await polledIds(since));
  });

  it('resumes after an API restart from Last-Event-ID with nothing missed and nothing twice', async () => {
    const since = await head();
    const before = await EventStreamReader.open(reader.client.base, { since });
    await post(2);
    await before.until(() => before.events.length >= 2);
    await reader.stop();
    await before.closedByServer();
    await post(3);
    reader = await startTestApp(readerEnv(), ['api']);
    await resumeAndCompare(before, since, 1);
  });

  it('keeps streaming through a Redis outage of its instance (announcements lost) and the client resumes with no gap', async () => {
    const since = await head();
    const stream = await EventStreamReader.open(reader.client.base, { since });
    await post(1);
    await stream.until(() => stream.events.length >= 1);
    await redis.close();
    let resumed: EventStreamReader | null = null;
    try {
      // Committed through the other instance while this one hears no announcement: its catch-up reads them from Postgres.
      await post(3);
      await stream.until(() => stream.events.length >= 4);
      // The client drops and comes back during the outage: an anonymous stream needs no Redis to open.
      stream.close();
      await post(2);
      resumed = await EventStreamReader.open(reader.client.base, {}, { 'last-event-id': stream.lastId! });
      await redis.open();
      await post(2);
      const expected = await polledIds(since);
      await resumed.until(() => stream.events.length + resumed!.events.length >= expected.length);
      expect([...stream.ids(), ...resumed.ids()]).toEqual(expected);
    } finally {
      await redis.open();
      resumed?.close();
      stream.close();
    }
  });
  it('carries its streams across a restart of Redis, and a client that reconnects meanwhile resumes with no gap', async () => {
    const since = await head();
    const stream = await EventStreamReader.open(reader.client.base, { since });
    await post(2);
    await stream.until(() => stream.events.length >= 2);
    await ownRedis.restart();
    // Posting needs Redis back in every process of the writer: the first posts after the restart may answer 503.
    await expect
      .poll(
        () =>
          createPost(writer.client, author, topic).then(
            () => true,
            () => false,
          ),
        { timeout: 20_000, interval: 200 },
      )
      .toBe(true);
    await post(1);
    stream.close();
    await resumeAndCompare(stream, since, 2);
  });
});

describe('a fan-out between announcements', () => {
  it('hands a stream the events of announcements that arrive together in one delivery, in id order', async () => {
    const fanout = new LedgerFanout(writer.orm.em, { catchUpMs: 60_000 });
    await fanout.start();
    const deliveries: string[][] = [];
    fanout.add({ deliver: (events) => deliveries.push(events.map((e) => e.row.eventId)) }, 'turns-project');
    const after = BigInt(await head());
    // Announcements as a publisher sends them; their events need not be in this database (the fan-out hands them on as they are).
    const event = (offset: bigint): LedgerEvent => ({
      eventId: (after + offset).toString(),
      outboxId: (after + offset).toString(),
      type: 'post.created',
      projectSlug: 'turns-project',
      topicSlug: null,
      actor: null,
      subjectId: null,
      data: {},
      createdAt: new Date(),
      publishedAt: new Date(),
      leafIndex: null,
      leafHash: null,
    });
    try {
      fanout.announce(encodeAnnouncement((after + 1n).toString(), [event(1n)]));
      fanout.announce(encodeAnnouncement((after + 3n).toString(), [event(2n), event(3n)]));
      expect(deliveries).toEqual([]);
      await Promise.resolve();
      expect(deliveries).toEqual([[1n, 2n, 3n].map((offset) => (after + offset).toString())]);
    } finally {
      fanout.stop();
    }
  });
});
