import { describe, expect, it } from 'vitest';
import { ledgerHead } from '../../../src/ledger/publisher.ts';
import { redisKeys } from '../../../src/redis.ts';
import { LedgerMarks } from '../../../src/store/ledgerMarks.ts';
import { createProject, registerAgent, unique } from '../../support/client.ts';
import { createTopic, type TestTopic } from '../../support/forum.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();

interface EventRecord {
  eventId: string;
  type: string;
  projectSlug: string | null;
  topicSlug: string | null;
  actor: string | null;
  subjectId: string | null;
  createdAt: string;
  data?: Record<string, unknown>;
}

const events = (query: Record<string, string>, token?: string, headers: Record<string, string> = {}) =>
  t.client.get('/api/forum/events', query, { token, headers });
const head = async (): Promise<string> => ledgerHead(t.orm.em.fork());

async function projectWithTopic(): Promise<TestTopic> {
  const owner = await registerAgent(t.client);
  return createTopic(t.client, owner, await createProject(t.client, owner));
}

describe('event ledger reads', () => {
  it('shows the events of a mutation on the very next read, in the contract’s record shape', async () => {
    const since = await head();
    const { owner, projectSlug, topicSlug, topicId } = await projectWithTopic();
    const reply = await events({ since, projectSlug });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ apiVersion: '2026-09-11', ok: true, nextCursor: null });
    const list = reply.body.events as EventRecord[];
    expect(list.map((e) => e.type)).toEqual(['project.created', 'topic.created']);
    expect(list[1]).toEqual({
      eventId: expect.stringMatching(/^[1-9][0-9]*$/),
      type: 'topic.created',
      projectSlug,
      topicSlug,
      actor: owner.handle,
      subjectId: topicId,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(BigInt(list[1]!.eventId)).toBeGreaterThan(BigInt(list[0]!.eventId));
  });

  it('adds data, the Merkle leaf and links in view=full', async () => {
    const since = await head();
    const { projectSlug } = await projectWithTopic();
    const reply = await events({ since, projectSlug, view: 'full' });
    const [created, topic] = reply.body.events;
    expect(created.data).toEqual({ name: `Project ${projectSlug}` });
    expect(created.leafIndex).toBe(0);
    expect(topic.leafIndex).toBe(1);
    expect(created.leafHash).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(created.publishedAt).toEqual(expect.any(String));
    expect(created.links.inclusionProof).toBe(
      `/api/forum/checkpoints/proofs/inclusion?projectSlug=${projectSlug}&eventId=${created.eventId}`,
    );
  });

  it('returns exactly the events with a greater id than since, ascending', async () => {
    const { owner, projectSlug } = await projectWithTopic();
    const all = (await events({ projectSlug })).body.events as EventRecord[];
    await createTopic(t.client, owner, projectSlug);
    const after = (await events({ projectSlug, since: all[0]!.eventId })).body.events as EventRecord[];
    expect(after.map((e) => e.type)).toEqual(['topic.created', 'topic.created']);
    expect(after[0]!.eventId).toBe(all[1]!.eventId);
    expect((await events({ projectSlug, since: after[1]!.eventId })).body.events).toEqual([]);
  });

  it('filters by type, projectSlug and topicSlug', async () => {
    const { owner, projectSlug, topicSlug } = await projectWithTopic();
    const other = await createTopic(t.client, owner, projectSlug);
    const byType = (await events({ projectSlug, type: 'topic.created' })).body.events as EventRecord[];
    expect(byType.map((e) => e.topicSlug)).toEqual([topicSlug, other.topicSlug]);
    const byTopic = (await events({ projectSlug, topicSlug: other.topicSlug })).body.events as EventRecord[];
    expect(byTopic).toHaveLength(1);
    expect(byTopic[0]!.subjectId).toBe(other.topicId);
    expect((await events({ projectSlug: unique('none-') })).body.events).toEqual([]);
  });

  it('pages with limit and a cursor that is the last eventId of the page', async () => {
    const { owner, projectSlug } = await projectWithTopic();
    await createTopic(t.client, owner, projectSlug);
    const first = await events({ projectSlug, limit: '2' });
    expect(first.body.events).toHaveLength(2);
    expect(first.body.nextCursor).toBe(first.body.events[1].eventId);
    const second = await events({ projectSlug, limit: '2', cursor: first.body.nextCursor });
    expect(second.body.events.map((e: EventRecord) => e.type)).toEqual(['topic.created']);
    expect(second.body.nextCursor).toBeNull();
  });

  it('lists nothing for a type no event has, whatever its shape', async () => {
    const reply = await events({ type: 'Project Created' });
    expect({ status: reply.status, events: reply.body.events }).toEqual({ status: 200, events: [] });
  });

  it('refuses malformed since, cursor and limit with 400', async () => {
    const bad: Record<string, string>[] = [{ since: '-1' }, { since: 'abc' }, { cursor: 'evt_x' }, { limit: '101' }];
    for (const query of bad) {
      const reply = await events(query);
      expect(reply.status, JSON.stringify(query)).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
    }
  });

  it('is read-only: POST answers 405', async () => {
    const reply = await t.client.post('/api/forum/events', { since: '0' });
    expect(reply.status).toBe(405);
  });
});

describe('followed events', () => {
  it('needs a token for followed=true (401)', async () => {
    const reply = await events({ followed: 'true' });
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('unauthenticated');
  });

  it('restricts followed=true to followed projects and topics', async () => {
    const reader = await registerAgent(t.client);
    const followedProject = await projectWithTopic();
    const topicHost = await projectWithTopic();
    await createTopic(t.client, topicHost.owner, topicHost.projectSlug);
    const ignored = await projectWithTopic();
    const follow = (fields: Record<string, string>) =>
      t.client.post('/api/forum/follows', { action: 'follow', ...fields }, { token: reader.token });
    expect((await follow({ targetType: 'project', projectSlug: followedProject.projectSlug })).status).toBe(200);
    expect((await follow({ targetType: 'topic', projectSlug: topicHost.projectSlug, topicSlug: topicHost.topicSlug })).status).toBe(200);

    const none = await events({ followed: 'true' }, (await registerAgent(t.client)).token);
    expect(none.body.events).toEqual([]);

    const seen = (await events({ followed: 'true', limit: '100' }, reader.token)).body.events as EventRecord[];
    const projects = new Set(seen.map((e) => e.projectSlug));
    expect(projects.has(followedProject.projectSlug)).toBe(true);
    expect(projects.has(ignored.projectSlug)).toBe(false);
    // Of the topic's project only the followed topic's events: its creation and the follow itself, not the other topic or the project.
    const fromTopicHost = seen.filter((e) => e.projectSlug === topicHost.projectSlug);
    expect(fromTopicHost.map((e) => e.type)).toEqual(['topic.created', 'follow.created']);
    expect(new Set(fromTopicHost.map((e) => e.topicSlug))).toEqual(new Set([topicHost.topicSlug]));
  });
});

describe('conditional event polling', () => {
  it('answers 304 while nothing new matches and 200 with the new event after a mutation', async () => {
    const { owner, projectSlug } = await projectWithTopic();
    // The ETag follows the ledger's head, which other test files move too: a 200 is allowed only with nothing new in it.
    let etag: string | null = null;
    let unchanged: Awaited<ReturnType<typeof events>> | null = null;
    for (let attempt = 0; attempt < 5 && unchanged?.status !== 304; attempt++) {
      const first = await events({ projectSlug });
      etag = first.headers.get('etag');
      expect(etag).toBeTruthy();
      unchanged = await events({ projectSlug }, undefined, { 'if-none-match': etag! });
      if (unchanged.status === 200) expect(unchanged.body.events).toEqual(first.body.events);
    }
    expect(unchanged?.status).toBe(304);
    expect(unchanged?.body).toBeNull();

    await createTopic(t.client, owner, projectSlug);
    const changed = await events({ projectSlug }, undefined, { 'if-none-match': etag! });
    expect(changed.status).toBe(200);
    expect(changed.body.events).toHaveLength(3);
  });

  it('never answers 304 over an outbox record committed before the read, whoever publishes it', async () => {
    const projectSlug = unique('outbox-');
    const before = await events({ projectSlug });
    expect(before.body.events).toEqual([]);
    // A committed command whose events no publisher has handled yet: the read must reconcile (or wait for the publisher at work).
    // Like every outbox writer, it raises the dirty mark before its commit (src/store/ledgerMarks.ts).
    await new LedgerMarks(t.redis, redisKeys(t.settings.redisPrefix)).markDirtyNow();
    await t.orm.em
      .fork()
      .execute(
        `insert into outbox_event (type, project_slug, actor, data, command_id, created_at) values ('project.updated', ` +
          `?, 'someone', '{"n":1}', 'direct', now())`,
        [projectSlug],
      );
    const reply = await events({ projectSlug, view: 'full' }, undefined, { 'if-none-match': before.headers.get('etag')! });
    expect(reply.status).toBe(200);
    expect(reply.body.events).toMatchObject([{ type: 'project.updated', projectSlug, actor: 'someone', data: { n: 1 }, leafIndex: 0 }]);
  });
});

describe('concurrent writers and pollers', () => {
  /** Polls since=<last seen id> until `done` holds; every id it sees must be exactly the previous one plus one. */
  async function poll(start: string, done: (seen: EventRecord[]) => boolean, deadline: number): Promise<EventRecord[]> {
    const seen: EventRecord[] = [];
    let since = start;
    while (!done(seen)) {
      if (Date.now() > deadline) throw new Error(`poller stopped at ${since} after ${seen.length} events`);
      const reply = await events({ since, limit: '100' });
      expect(reply.status).toBe(200);
      for (const event of reply.body.events as EventRecord[]) {
        expect(BigInt(event.eventId), `gap or reorder after ${since}`).toBe(BigInt(since) + 1n);
        since = event.eventId;
        seen.push(event);
      }
    }
    return seen;
  }

  it('shows every event exactly once, in order and without gaps, to pollers racing 4 agents making 40 writes', {
    timeout: 90_000,
  }, async () => {
    const start = await head();
    const agents = await Promise.all([1, 2, 3, 4].map(() => registerAgent(t.client)));
    const slugs = agents.map((agent) => Array.from({ length: 5 }, () => ({ agent, slug: unique('c-') })));
    const expected = new Set(slugs.flat().flatMap(({ slug }) => [`project.created ${slug}`, `topic.created ${slug}`]));
    const matched = (seen: EventRecord[]) => seen.filter((e) => expected.has(`${e.type} ${e.projectSlug}`)).length === expected.size;

    const deadline = Date.now() + 80_000;
    const pollers = [poll(start, matched, deadline), poll(start, matched, deadline)];
    // Every agent creates its 5 projects at once, then a topic in each at once: up to 20 commands in flight across partitions.
    await Promise.all(
      slugs.map(async (mine) => {
        await Promise.all(mine.map(({ agent, slug }) => createProject(t.client, agent, slug)));
        await Promise.all(mine.map(({ agent, slug }) => createTopic(t.client, agent, slug)));
      }),
    );
    const [first, second] = await Promise.all(pollers);
    for (const seen of [first!, second!]) {
      const ours = seen.filter((e) => expected.has(`${e.type} ${e.projectSlug}`));
      expect(ours).toHaveLength(expected.size);
      expect(new Set(ours.map((e) => e.eventId)).size).toBe(expected.size);
      expect(new Set(seen.map((e) => e.eventId)).size).toBe(seen.length);
    }
    // Both pollers saw the same sequence over their common prefix.
    const common = Math.min(first!.length, second!.length);
    expect(first!.slice(0, common).map((e) => e.eventId)).toEqual(second!.slice(0, common).map((e) => e.eventId));
  });
});
