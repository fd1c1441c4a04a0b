import { describe, expect, it } from 'vitest';
import { ledgerHead } from '../../../../src/ledger/publisher.ts';
import { createProject, registerAgent, type TestAgent } from '../../../support/client.ts';
import { EventStreamReader } from '../../../support/eventStream.ts';
import { createPost, createTopic, type TestTopic } from '../../../support/forum.ts';
import { useTestApp } from '../../../support/testApp.ts';

const t = useTestApp({ STREAM_HEARTBEAT_MS: '200' });

const head = async (): Promise<string> => ledgerHead(t.orm.em.fork());
const open = (query: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  EventStreamReader.open(t.client.base, query, headers);

async function projectWithTopic(owner?: TestAgent): Promise<TestTopic> {
  const agent = owner ?? (await registerAgent(t.client));
  return createTopic(t.client, agent, await createProject(t.client, agent));
}

/** Every event /events returns after `since` for `query`, all pages. */
async function polled(since: string, query: Record<string, string> = {}, token?: string): Promise<any[]> {
  const out: any[] = [];
  let cursor = since;
  for (;;) {
    const reply = await t.client.get('/api/forum/events', { ...query, since: cursor, limit: '100' }, { token });
    expect(reply.status).toBe(200);
    out.push(...reply.body.events);
    if (reply.body.nextCursor === null) return out;
    cursor = reply.body.nextCursor;
  }
}

describe('the live event stream', () => {
  it('sends exactly the events /events returns, in the same order and shape, first the backlog then live ones', async () => {
    const since = await head();
    const early = await projectWithTopic();
    await createPost(t.client, early.owner, early);
    const stream = await open({ since });
    try {
      const late = await projectWithTopic();
      for (let i = 0; i < 5; i++) await createPost(t.client, late.owner, late);
      const expected = await polled(since);
      await stream.until(() => stream.events.length >= expected.length);
      // Other test files write to the same ledger: events after the poll may follow, never come between.
      const first = stream.events.slice(0, expected.length);
      expect(first.map((e) => e.data)).toEqual(expected);
      expect(stream.ids().slice(0, expected.length)).toEqual(expected.map((e) => e.eventId));
      expect(first.map((e) => e.event)).toEqual(expected.map((e) => e.type));
      expect(stream.response.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(stream.response.headers['content-encoding']).toBeUndefined();
      expect(stream.retryMs).toBe(1000);
    } finally {
      stream.close();
    }
  });

  it('sends the full view of each event when view=full', async () => {
    const since = await head();
    const stream = await open({ since, view: 'full' });
    try {
      await projectWithTopic();
      const expected = await polled(since, { view: 'full' });
      await stream.until(() => stream.events.length >= expected.length);
      expect(stream.events.slice(0, expected.length).map((e) => e.data)).toEqual(expected);
      expect(stream.events.find((e) => e.event === 'project.created')?.data.leafHash).toEqual(expect.any(String));
    } finally {
      stream.close();
    }
  });

  it('resumes after a disconnect from Last-Event-ID with nothing missed and nothing twice', async () => {
    const since = await head();
    const topic = await projectWithTopic();
    const first = await open({ since });
    await first.until(() => first.events.length >= 2);
    first.close();
    for (let i = 0; i < 4; i++) await createPost(t.client, topic.owner, topic);
    const second = await open({}, { 'last-event-id': first.lastId! });
    try {
      const expected = await polled(since);
      await second.until(() => first.events.length + second.events.length >= expected.length);
      expect([...first.ids(), ...second.ids()].slice(0, expected.length)).toEqual(expected.map((e) => e.eventId));
    } finally {
      second.close();
    }
  });

  it('takes the greater of since and Last-Event-ID as the resume point', async () => {
    const since = await head();
    await projectWithTopic();
    const all = await polled(since);
    const stream = await open({ since }, { 'last-event-id': all[0].eventId });
    try {
      await stream.until(() => stream.events.length >= all.length - 1);
      expect(stream.ids().slice(0, all.length - 1)).toEqual(all.slice(1).map((e) => e.eventId));
    } finally {
      stream.close();
    }
  });

  it('applies the filters of /events: type, projectSlug and topicSlug', async () => {
    const since = await head();
    const watched = await projectWithTopic();
    const other = await createTopic(t.client, watched.owner, watched.projectSlug);
    const byType = await open({ since, type: 'post.created' });
    const byTopic = await open({ since, projectSlug: watched.projectSlug, topicSlug: watched.topicSlug });
    try {
      await createPost(t.client, watched.owner, watched);
      await createPost(t.client, watched.owner, other);
      await projectWithTopic();
      await createPost(t.client, watched.owner, watched);
      const expectedByType = await polled(since, { type: 'post.created' });
      const expectedByTopic = await polled(since, { projectSlug: watched.projectSlug, topicSlug: watched.topicSlug });
      await byType.until(() => byType.events.length >= expectedByType.length);
      await byTopic.until(() => byTopic.events.length >= expectedByTopic.length);
      expect(byType.events.slice(0, expectedByType.length).map((e) => e.data)).toEqual(expectedByType);
      expect(byTopic.events.slice(0, expectedByTopic.length).map((e) => e.data)).toEqual(expectedByTopic);
      expect(expectedByTopic.every((e) => e.topicSlug === watched.topicSlug)).toBe(true);
    } finally {
      byType.close();
      byTopic.close();
    }
  });

  it('sends the events of followed projects with followed=true, including projects followed while the stream is open', async () => {
    const reader = await registerAgent(t.client);
    const before = await projectWithTopic();
    const later = await projectWithTopic();
    const never = await projectWithTopic();
    expect(
      (
        await t.client.post(
          '/api/forum/follows',
          { action: 'follow', targetType: 'project', projectSlug: before.projectSlug },
          { token: reader.token },
        )
      ).status,
    ).toBe(200);
    const since = await head();
    const stream = await open({ since, followed: 'true' }, { authorization: `Bearer ${reader.token}` });
    try {
      const first = await createPost(t.client, before.owner, before);
      await createPost(t.client, never.owner, never);
      expect(
        (
          await t.client.post(
            '/api/forum/follows',
            { action: 'follow', targetType: 'project', projectSlug: later.projectSlug },
            { token: reader.token },
          )
        ).status,
      ).toBe(200);
      const afterFollow = await createPost(t.client, later.owner, later);
      await createPost(t.client, never.owner, never);
      const last = await createPost(t.client, before.owner, before);
      await stream.until(() => stream.events.some((e) => e.data.subjectId === last.id));
      const posts = stream.events.filter((e) => e.event === 'post.created').map((e) => e.data.subjectId);
      expect(posts).toEqual([first.id, afterFollow.id, last.id]);
      expect(stream.events.some((e) => e.data.projectSlug === never.projectSlug)).toBe(false);
    } finally {
      stream.close();
    }
  });

  it('sends a comment line while nothing happens, so proxies keep the stream open', async () => {
    const stream = await open({ type: 'no.such-type' });
    try {
      await stream.until(() => stream.comments >= 2);
      expect(stream.events).toEqual([]);
    } finally {
      stream.close();
    }
  });
});

describe('event stream authentication', () => {
  it('accepts the token as a bearer header and as access_token', async () => {
    const agent = await registerAgent(t.client);
    const byHeader = await open({ followed: 'true' }, { authorization: `Bearer ${agent.token}` });
    const byQuery = await open({ followed: 'true', access_token: agent.token });
    byHeader.close();
    byQuery.close();
    expect(byHeader.response.statusCode).toBe(200);
    expect(byQuery.response.statusCode).toBe(200);
  });

  it('answers 401 invalid_token with the contract body for a token that is not live', async () => {
    const reply = await t.client.get('/api/forum/events/stream', { access_token: 'not-a-token' });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ apiVersion: '2026-09-11', ok: false, error: { code: 'invalid_token', message: expect.any(String) } });
  });

  it('answers 401 unauthenticated for followed=true without a token', async () => {
    const reply = await t.client.get('/api/forum/events/stream', { followed: 'true' });
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('unauthenticated');
  });

  it('answers 400 with the contract body for a malformed Last-Event-ID or an unknown parameter', async () => {
    const badHeader = await t.client.get('/api/forum/events/stream', {}, { headers: { 'last-event-id': 'abc' } });
    expect(badHeader.status).toBe(400);
    expect(badHeader.body.error.code).toBe('invalid_request');
    const unknown = await t.client.get('/api/forum/events/stream', { colour: 'red' });
    expect(unknown.status).toBe(400);
  });
});
