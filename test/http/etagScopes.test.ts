import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerHead } from '../../src/ledger/publisher.ts';
import { registerAgent, type TestAgent } from '../support/client.ts';
import { createPost, newTopic, type TestTopic } from '../support/forum.ts';
import { sample, scrapeMetrics } from '../support/metrics.ts';
import { rotateKey } from '../support/signedActions.ts';
import { startTestApp, useTestApp, type TestApp } from '../support/testApp.ts';

const OPERATOR_TOKEN = 'operator-token-for-etag-scopes';
// Instance A: API and workers. Instance B: a second API on the same Redis and Postgres, with a read cache of its own.
const a = useTestApp({ OPERATOR_TOKEN });
let b: TestApp;
let writer: TestAgent;
let topic: TestTopic;

beforeAll(async () => {
  b = await startTestApp({ OPERATOR_TOKEN, REDIS_PREFIX: a.settings.redisPrefix }, ['api']);
  topic = await newTopic(a.client);
  writer = topic.owner;
});
afterAll(async () => {
  await b?.stop();
});

const hits = async (t: TestApp) => sample(await scrapeMetrics(t), 'agora_read_cache_total', 'outcome="hit"');
const me = (agent: TestAgent, etag?: string) =>
  a.client.get('/api/forum/agents/me', {}, { token: agent.token, headers: etag ? { 'if-none-match': etag } : {} });

describe('agents/me’s ETag', () => {
  it('stays put while other agents post, vote and register', async () => {
    const reader = await registerAgent(a.client);
    const first = await me(reader);
    const post = await createPost(a.client, writer, topic);
    expect(
      (
        await a.client.post(
          '/api/forum/votes',
          { action: 'cast', postId: post.id, value: 'support' },
          { token: (await registerAgent(a.client)).token },
        )
      ).status,
    ).toBe(200);
    const again = await me(reader, first.headers.get('etag') as string);
    expect(again.status).toBe(304);
  });

  it('moves with the agent’s own post, the support it receives and its key', async () => {
    const reader = await registerAgent(a.client);
    const readerTopic = await newTopic(a.client);
    let etag = (await me(reader)).headers.get('etag') as string;
    const own = await createPost(a.client, reader, readerTopic);
    const afterPost = await me(reader, etag);
    expect(afterPost.status).toBe(200);
    expect(afterPost.body.agent.standing.signals.posts).toBe(1);
    etag = afterPost.headers.get('etag') as string;
    expect(
      (await a.client.post('/api/forum/votes', { action: 'cast', postId: own.id, value: 'support' }, { token: writer.token })).status,
    ).toBe(200);
    const afterSupport = await me(reader, etag);
    expect(afterSupport.status).toBe(200);
    expect(afterSupport.body.agent.standing.signals.supportReceived).toBe(1);
    etag = afterSupport.headers.get('etag') as string;
    const keys = await rotateKey(a.client, reader);
    const afterRotation = await me(reader, etag);
    expect(afterRotation.status).toBe(200);
    expect(afterRotation.body.agent.publicKey).toBe(keys.publicKey);
  });
});

describe('a complete ledger page', () => {
  it('keeps one ETag forever, says immutable, and is answered from the cache while the ledger grows, on every instance', async () => {
    const since = (BigInt(await ledgerHead(a.orm.em.fork())) - 1n).toString();
    for (let i = 0; i < 3; i++) await createPost(a.client, writer, topic);
    const page = { since, limit: '2' };
    const first = await a.client.get('/api/forum/events', page);
    expect(first.body.nextCursor).not.toBeNull();
    expect(first.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const etag = first.headers.get('etag') as string;
    const before = await hits(a);
    await createPost(a.client, writer, topic);
    const again = await a.client.get('/api/forum/events', page);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.body).toEqual(first.body);
    expect(await hits(a)).toBe(before + 1);
    expect((await a.client.get('/api/forum/events', page, { headers: { 'if-none-match': etag } })).status).toBe(304);
    // Another instance renders the same bytes, so the same ETag: a client's copy holds anywhere.
    expect((await b.client.get('/api/forum/events', page)).headers.get('etag')).toBe(etag);
    expect((await b.client.get('/api/forum/events', page, { headers: { 'if-none-match': etag } })).status).toBe(304);
  });

  it('is the only kind: the last page of the ledger revalidates and moves when an event is published', async () => {
    const since = (BigInt(await ledgerHead(a.orm.em.fork())) - 1n).toString();
    await createPost(a.client, writer, topic);
    const tail = await a.client.get('/api/forum/events', { since, limit: '50', projectSlug: topic.projectSlug });
    expect(tail.body.nextCursor).toBeNull();
    expect(tail.headers.get('cache-control')).toBe('private, no-cache');
    await createPost(a.client, writer, topic);
    const grown = await a.client.get(
      '/api/forum/events',
      { since, limit: '50', projectSlug: topic.projectSlug },
      { headers: { 'if-none-match': tail.headers.get('etag') as string } },
    );
    expect(grown.status).toBe(200);
    expect(grown.body.events.length).toBe(tail.body.events.length + 1);
  });

  it('is never a followed page, whose content moves with the reader’s follows', async () => {
    const reader = await registerAgent(a.client);
    expect(
      (
        await a.client.post(
          '/api/forum/follows',
          { action: 'follow', targetType: 'project', projectSlug: topic.projectSlug },
          { token: reader.token },
        )
      ).status,
    ).toBe(200);
    for (let i = 0; i < 3; i++) await createPost(a.client, writer, topic);
    const followed = await a.client.get('/api/forum/events', { since: '0', limit: '1', followed: 'true' }, { token: reader.token });
    expect(followed.body.nextCursor).not.toBeNull();
    expect(followed.headers.get('cache-control')).toBe('private, no-cache');
  });
});

describe('a page of one project’s posts with a page after it', () => {
  const listing = (t: TestApp, project: TestTopic, etag?: string) =>
    t.client.get('/api/forum/posts', { projectSlug: project.projectSlug, limit: '2' }, { headers: etag ? { 'if-none-match': etag } : {} });

  it('keeps its ETag and cached body while posts are only added, on every instance', async () => {
    const project = await newTopic(a.client);
    for (let i = 0; i < 3; i++) await createPost(a.client, project.owner, project);
    const first = await listing(a, project);
    expect(first.body.nextCursor).not.toBeNull();
    const etag = first.headers.get('etag') as string;
    await createPost(a.client, project.owner, project);
    expect((await listing(a, project, etag)).status).toBe(304);
    const before = await hits(a);
    const again = await listing(a, project);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.body).toEqual(first.body);
    expect(await hits(a)).toBe(before + 1);
    expect((await listing(b, project, etag)).status).toBe(304);
  });

  it('moves when a post on it changes: a vote moves its tally', async () => {
    const project = await newTopic(a.client);
    for (let i = 0; i < 3; i++) await createPost(a.client, project.owner, project);
    const first = await listing(a, project);
    const [onPage] = first.body.posts as { id: string }[];
    const voter = await registerAgent(a.client);
    expect(
      (await a.client.post('/api/forum/votes', { action: 'cast', postId: onPage?.id, value: 'support' }, { token: voter.token })).status,
    ).toBe(200);
    const after = await listing(a, project, first.headers.get('etag') as string);
    expect(after.status).toBe(200);
    expect(after.body.posts[0].tally.support).toBe(1);
  });

  it('is only the kind that ends a full page: the last page moves when a post is added', async () => {
    const project = await newTopic(a.client);
    await createPost(a.client, project.owner, project);
    const last = await listing(a, project);
    expect(last.body.nextCursor).toBeNull();
    await createPost(a.client, project.owner, project);
    const grown = await listing(a, project, last.headers.get('etag') as string);
    expect(grown.status).toBe(200);
    expect(grown.body.posts).toHaveLength(2);
  });

  it('is never a page across projects, whose posts can commit out of id order', async () => {
    const project = await newTopic(a.client);
    await createPost(a.client, project.owner, project);
    const oldest = await a.client.get('/api/forum/posts', { limit: '1' });
    expect(oldest.body.nextCursor).not.toBeNull();
    await createPost(a.client, project.owner, project);
    const again = await a.client.get(
      '/api/forum/posts',
      { limit: '1' },
      { headers: { 'if-none-match': oldest.headers.get('etag') as string } },
    );
    expect(again.status).toBe(200);
  });
});

describe('a thread’s ETag', () => {
  it('stays put while posts are added outside it, in its project too, and moves with a reply', async () => {
    const project = await newTopic(a.client);
    const root = await createPost(a.client, project.owner, project);
    const thread = (etag?: string) =>
      a.client.get('/api/forum/posts', { rootPostId: root.id }, { headers: etag ? { 'if-none-match': etag } : {} });
    const etag = (await thread()).headers.get('etag') as string;
    await createPost(a.client, project.owner, project);
    await createPost(a.client, writer, topic);
    expect((await thread(etag)).status).toBe(304);
    const reply = await createPost(a.client, project.owner, project, { parentPostId: root.id });
    const grown = await thread(etag);
    expect(grown.status).toBe(200);
    expect(grown.body.posts.map((p: { id: string }) => p.id)).toEqual([root.id, reply.id]);
  });
});
