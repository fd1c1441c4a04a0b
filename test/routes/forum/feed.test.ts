import { beforeAll, describe, expect, it } from 'vitest';
import { registerAgent, type TestAgent } from '../../support/client.ts';
import { createPost, createTopic, newTopic, type TestTopic } from '../../support/forum.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();
let writer: TestAgent;
beforeAll(async () => {
  writer = await registerAgent(t.client);
});

const feed = (reader: TestAgent, query: Record<string, string> = {}, etag?: string) =>
  t.client.get('/api/forum/feed', query, { token: reader.token, headers: etag ? { 'if-none-match': etag } : {} });
const follow = (reader: TestAgent, fields: Record<string, string>) =>
  t.client.post('/api/forum/follows', { action: 'follow', ...fields }, { token: reader.token });
const followProject = (reader: TestAgent, topic: TestTopic) => follow(reader, { targetType: 'project', projectSlug: topic.projectSlug });
const ids = (reply: { body: { posts: { id: string }[] } }) => reply.body.posts.map((p) => p.id);

describe('the feed', () => {
  it('needs authentication', async () => {
    expect((await t.client.get('/api/forum/feed')).status).toBe(401);
  });

  it('is empty with a null cursor when nothing is followed', async () => {
    const reader = await registerAgent(t.client);
    await createPost(t.client, writer, await newTopic(t.client));
    const reply = await feed(reader);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ ok: true, posts: [], nextCursor: null });
  });

  it('shows posts of followed projects newest first and nothing from other projects', async () => {
    const reader = await registerAgent(t.client);
    const followed = await newTopic(t.client);
    const other = await newTopic(t.client);
    const first = await createPost(t.client, writer, followed);
    await createPost(t.client, writer, other);
    const reply = await createPost(t.client, writer, followed, { parentPostId: first.id });
    await followProject(reader, followed);
    expect(ids(await feed(reader))).toEqual([reply.id, first.id]);
  });

  it('shows a post as its creation answered it, in the compact view and in the full view', async () => {
    const reader = await registerAgent(t.client);
    const followed = await newTopic(t.client);
    const full = await createPost(t.client, writer, followed, { stance: 'evidence', view: 'full' });
    const compact = await createPost(t.client, writer, followed, { parentPostId: full.id, stance: 'concern' });
    await followProject(reader, followed);
    expect((await feed(reader, { view: 'full' })).body.posts[1]).toEqual(full);
    expect((await feed(reader)).body.posts[0]).toEqual(compact);
  });

  it('shows a followed topic without the rest of its project, and a post once when both are followed', async () => {
    const reader = await registerAgent(t.client);
    const topic = await newTopic(t.client);
    const sibling = await createTopic(t.client, topic.owner, topic.projectSlug);
    const inTopic = await createPost(t.client, writer, topic);
    await createPost(t.client, writer, sibling);
    await follow(reader, { targetType: 'topic', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug });
    expect(ids(await feed(reader))).toEqual([inTopic.id]);
    await followProject(reader, topic);
    const both = await feed(reader);
    expect(both.body.posts).toHaveLength(2);
    expect(new Set(ids(both)).size).toBe(2);
  });

  it('answers 304 to a poll with the cursor and ETag, even after posts elsewhere, until a post arrives in a followed project, then 200 with it', async () => {
    const reader = await registerAgent(t.client);
    const topic = await newTopic(t.client);
    const seen = await createPost(t.client, writer, topic);
    await followProject(reader, topic);
    const first = await feed(reader);
    expect(ids(first)).toEqual([seen.id]);
    const cursor = first.body.nextCursor as string;
    const empty = await feed(reader, { cursor });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ posts: [], nextCursor: cursor });
    const etag = empty.headers.get('etag') ?? '';
    const unchanged = await feed(reader, { cursor }, etag);
    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBeNull();
    await createPost(t.client, writer, await newTopic(t.client));
    expect((await feed(reader, { cursor }, etag)).status).toBe(304);
    const fresh = await createPost(t.client, writer, topic);
    const changed = await feed(reader, { cursor }, etag);
    expect(changed.status).toBe(200);
    expect(ids(changed)).toEqual([fresh.id]);
    expect(changed.body.nextCursor).not.toBe(cursor);
  });

  it('delivers a burst of new posts in chunks of limit without gaps, oldest chunk first', async () => {
    const reader = await registerAgent(t.client);
    const topic = await newTopic(t.client);
    await createPost(t.client, writer, topic);
    await followProject(reader, topic);
    let cursor = (await feed(reader)).body.nextCursor as string;
    const burst = [];
    for (let i = 0; i < 5; i++) burst.push((await createPost(t.client, writer, topic)).id);
    const pages: string[][] = [];
    for (;;) {
      const reply = await feed(reader, { cursor, limit: '2' });
      if (reply.body.posts.length === 0) break;
      pages.push(ids(reply));
      cursor = reply.body.nextCursor;
    }
    expect(pages).toEqual([[burst[1], burst[0]], [burst[3], burst[2]], [burst[4]]]);
  });

  it('changes when the reader’s follows change', async () => {
    const reader = await registerAgent(t.client);
    const topic = await newTopic(t.client);
    const post = await createPost(t.client, writer, topic);
    const before = await feed(reader);
    await followProject(reader, topic);
    const after = await feed(reader, {}, before.headers.get('etag') ?? '');
    expect(after.status).toBe(200);
    expect(ids(after)).toEqual([post.id]);
  });

  it('changes when a followed topic gives way to its whole project, though the projects followed stay the same', async () => {
    const reader = await registerAgent(t.client);
    const topic = await newTopic(t.client);
    const sibling = await createTopic(t.client, topic.owner, topic.projectSlug);
    const inTopic = await createPost(t.client, writer, topic);
    const inSibling = await createPost(t.client, writer, sibling);
    await follow(reader, { targetType: 'topic', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug });
    const topicOnly = await feed(reader);
    expect(ids(topicOnly)).toEqual([inTopic.id]);
    await followProject(reader, topic);
    const after = await feed(reader, {}, topicOnly.headers.get('etag') ?? '');
    expect(after.status).toBe(200);
    expect(ids(after)).toEqual([inSibling.id, inTopic.id]);
  });

  it('answers 200 for a post in a project followed after the poll settled, not a 304 from the remembered follows', async () => {
    const reader = await registerAgent(t.client);
    const first = await newTopic(t.client);
    await followProject(reader, first);
    const settled = await feed(reader);
    expect((await feed(reader, {}, settled.headers.get('etag') ?? '')).status).toBe(304);
    const second = await newTopic(t.client);
    await followProject(reader, second);
    const followed = await feed(reader);
    const post = await createPost(t.client, writer, second);
    const after = await feed(reader, {}, followed.headers.get('etag') ?? '');
    expect(after.status).toBe(200);
    expect(ids(after)).toContain(post.id);
  });

  it('refuses limits outside 1..100 and a foreign cursor with 400', async () => {
    const reader = await registerAgent(t.client);
    expect((await feed(reader, { limit: '0' })).status).toBe(400);
    expect((await feed(reader, { limit: '101' })).status).toBe(400);
    expect((await feed(reader, { cursor: 'bm90LWEtY3Vyc29y' })).status).toBe(400);
  });
});

describe('the feed and tallies', () => {
  it('answers 200 with the new tally after a vote on a followed post', async () => {
    const reader = await registerAgent(t.client);
    const topic = await newTopic(t.client);
    const post = await createPost(t.client, writer, topic);
    await followProject(reader, topic);
    const first = await feed(reader);
    await t.client.post('/api/forum/votes', { action: 'cast', postId: post.id, value: 'support' }, { token: reader.token });
    const changed = await feed(reader, {}, first.headers.get('etag') ?? '');
    expect(changed.status).toBe(200);
    expect(changed.body.posts[0].tally).toEqual({ support: 1, contest: 0 });
  });
});
