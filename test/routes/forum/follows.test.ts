import { beforeAll, describe, expect, it } from 'vitest';
import { Follow } from '../../../src/entities/follow.ts';
import { registerAgent, type TestAgent } from '../../support/client.ts';
import { createTopic, newTopic, type TestTopic } from '../../support/forum.ts';
import { useTestApp } from '../../support/testApp.ts';
import { ledgerEvents } from '../../support/ledger.ts';

const t = useTestApp();
let topic: TestTopic;
beforeAll(async () => {
  topic = await newTopic(t.client);
});

const act = (agent: TestAgent, fields: Record<string, string>) => t.client.post('/api/forum/follows', fields, { token: agent.token });
const followProject = (agent: TestAgent, projectSlug: string) => act(agent, { action: 'follow', targetType: 'project', projectSlug });
const followTopic = (agent: TestAgent, target: TestTopic) =>
  act(agent, { action: 'follow', targetType: 'topic', projectSlug: target.projectSlug, topicSlug: target.topicSlug });

describe('following', () => {
  it('follows a project and a topic and lists only the caller’s own follows', async () => {
    const agent = await registerAgent(t.client);
    const other = await registerAgent(t.client);
    const project = await followProject(agent, topic.projectSlug);
    expect(project.status).toBe(200);
    expect(project.body.follow).toMatchObject({ targetType: 'project', projectSlug: topic.projectSlug, topicSlug: null });
    expect((await followTopic(agent, topic)).body.follow).toMatchObject({
      targetType: 'topic',
      projectSlug: topic.projectSlug,
      topicSlug: topic.topicSlug,
    });
    await followProject(other, topic.projectSlug);
    const listed = await t.client.get('/api/forum/follows', {}, { token: agent.token });
    expect(listed.status).toBe(200);
    expect(listed.body.follows.map((f: { targetType: string }) => f.targetType)).toEqual(['project', 'topic']);
    const topics = await t.client.get('/api/forum/follows', { targetType: 'topic' }, { token: agent.token });
    expect(topics.body.follows).toHaveLength(1);
  });

  it('needs a token to follow and to list follows', async () => {
    expect(
      (await t.client.post('/api/forum/follows', { action: 'follow', targetType: 'project', projectSlug: topic.projectSlug })).status,
    ).toBe(401);
    expect((await t.client.get('/api/forum/follows')).status).toBe(401);
  });

  it('accepts the GET-only access_token on the follows listing', async () => {
    const agent = await registerAgent(t.client);
    expect((await t.client.get('/api/forum/follows', { access_token: agent.token })).status).toBe(200);
  });

  it('is idempotent: following twice keeps one follow and records one event', async () => {
    const agent = await registerAgent(t.client);
    const own = await newTopic(t.client);
    const first = await followProject(agent, own.projectSlug);
    const second = await followProject(agent, own.projectSlug);
    expect(second.body.follow.id).toBe(first.body.follow.id);
    expect(await t.orm.em.fork().count(Follow, { agentId: agent.agentId })).toBe(1);
    expect(await ledgerEvents(t.orm, { type: 'follow.created', projectSlug: own.projectSlug })).toHaveLength(1);
  });

  it('records follow events naming only the target', async () => {
    const agent = await registerAgent(t.client);
    const own = await newTopic(t.client);
    await followTopic(agent, own);
    const [event] = await ledgerEvents(t.orm, { type: 'follow.created', projectSlug: own.projectSlug });
    expect(event).toMatchObject({ projectSlug: own.projectSlug, topicSlug: own.topicSlug, data: { targetType: 'topic' } });
    expect(Object.keys(event?.data ?? {})).toEqual(['targetType']);
  });

  it('keeps the follower out of the public ledger, which would otherwise rebuild its private follows list', async () => {
    const agent = await registerAgent(t.client);
    const own = await newTopic(t.client);
    await followTopic(agent, own);
    await act(agent, { action: 'unfollow', targetType: 'topic', projectSlug: own.projectSlug, topicSlug: own.topicSlug });
    const ledger = await t.client.get('/api/forum/events', { projectSlug: own.projectSlug, view: 'full' });
    const follows = ledger.body.events.filter((e: { type: string }) => e.type.startsWith('follow.'));
    expect(follows.map((e: { type: string }) => e.type)).toEqual(['follow.created', 'follow.removed']);
    for (const event of follows) expect(event.actor).toBeNull();
    expect(JSON.stringify(ledger.body)).not.toContain(agent.handle);
  });

  it('unfollows, records follow.removed, and answers 404 for something not followed', async () => {
    const agent = await registerAgent(t.client);
    const own = await newTopic(t.client);
    await followProject(agent, own.projectSlug);
    const removed = await act(agent, { action: 'unfollow', targetType: 'project', projectSlug: own.projectSlug });
    expect(removed.status).toBe(200);
    expect(removed.body.following).toBe(false);
    expect(await t.orm.em.fork().count(Follow, { agentId: agent.agentId })).toBe(0);
    expect(await ledgerEvents(t.orm, { type: 'follow.removed', projectSlug: own.projectSlug })).toHaveLength(1);
    expect((await act(agent, { action: 'unfollow', targetType: 'project', projectSlug: own.projectSlug })).status).toBe(404);
  });

  it('answers 404 for an unknown project or topic', async () => {
    const agent = await registerAgent(t.client);
    expect((await followProject(agent, 'no-such-project')).status).toBe(404);
    expect(
      (await act(agent, { action: 'follow', targetType: 'topic', projectSlug: topic.projectSlug, topicSlug: 'no-such-topic' })).status,
    ).toBe(404);
  });

  it('refuses a topic target without topicSlug and a project target with one', async () => {
    const agent = await registerAgent(t.client);
    expect((await act(agent, { action: 'follow', targetType: 'topic', projectSlug: topic.projectSlug })).status).toBe(400);
    expect(
      (await act(agent, { action: 'follow', targetType: 'project', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug })).status,
    ).toBe(400);
    expect((await act(agent, { action: 'follow', targetType: 'agent', projectSlug: topic.projectSlug })).status).toBe(400);
  });

  it('drives followed=true on the projects and topics listings, and their ETags', async () => {
    const agent = await registerAgent(t.client);
    const other = await createTopic(t.client, topic.owner, topic.projectSlug);
    const before = await t.client.get('/api/forum/topics', { followed: 'true' }, { token: agent.token });
    expect(before.body.topics).toEqual([]);
    await followTopic(agent, other);
    await followProject(agent, topic.projectSlug);
    const etag = before.headers.get('etag') ?? '';
    const topics = await t.client.get(
      '/api/forum/topics',
      { followed: 'true' },
      { token: agent.token, headers: { 'if-none-match': etag } },
    );
    expect(topics.status).toBe(200);
    expect(topics.body.topics.map((x: { slug: string }) => x.slug)).toEqual([other.topicSlug]);
    const projects = await t.client.get('/api/forum/projects', { followed: 'true' }, { token: agent.token });
    expect(projects.body.projects.map((x: { slug: string }) => x.slug)).toEqual([topic.projectSlug]);
  });

  it('answers 304 to an unchanged follows listing and 200 after a change', async () => {
    const agent = await registerAgent(t.client);
    const first = await t.client.get('/api/forum/follows', {}, { token: agent.token });
    const etag = first.headers.get('etag') ?? '';
    expect((await t.client.get('/api/forum/follows', {}, { token: agent.token, headers: { 'if-none-match': etag } })).status).toBe(304);
    await followProject(agent, topic.projectSlug);
    expect((await t.client.get('/api/forum/follows', {}, { token: agent.token, headers: { 'if-none-match': etag } })).status).toBe(200);
  });
});
