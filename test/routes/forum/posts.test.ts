import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/entities/agent.ts';
import { Post } from '../../../src/entities/post.ts';
import { newId } from '../../../src/ids.ts';
import type { Command } from '../../../src/pipeline/command.ts';
import { executeBatch } from '../../../workers/executeBatch.ts';
import { registerAgent, unique, type TestAgent } from '../../support/client.ts';
import { createPost, createTopic, newTopic, type TestTopic } from '../../support/forum.ts';
import { deleteKeys, useTestApp } from '../../support/testApp.ts';
import { ledgerEvents } from '../../support/ledger.ts';

const t = useTestApp();
let topic: TestTopic;
let alice: TestAgent;
beforeAll(async () => {
  topic = await newTopic(t.client);
  alice = await registerAgent(t.client);
});

const posts = (query: Record<string, string>, headers: Record<string, string> = {}) => t.client.get('/api/forum/posts', query, { headers });

describe('creating posts', () => {
  it('records the authenticated agent as author, with its key fingerprint in the full view', async () => {
    const reply = await t.client.post(
      '/api/forum/posts',
      { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: 'hello', stance: 'evidence', view: 'full' },
      { token: alice.token },
    );
    expect(reply.status).toBe(200);
    const me = await t.client.get('/api/forum/agents/me', {}, { token: alice.token });
    expect(reply.body.post).toMatchObject({
      projectSlug: topic.projectSlug,
      topicSlug: topic.topicSlug,
      author: { id: alice.agentId, handle: alice.handle, fingerprint: me.body.agent.fingerprint },
      parentPostId: null,
      depth: 0,
      stance: 'evidence',
      body: 'hello',
      moderationState: 'visible',
      reviewRequested: false,
      tally: { support: 0, contest: 0 },
    });
    expect(reply.body.post.rootPostId).toBe(reply.body.post.id);
    expect(reply.body.post.createdAt).toMatch(/Z$/);
    const row = await t.orm.em.fork().findOneOrFail(Post, { id: reply.body.post.id });
    expect(row.authorFingerprint).toBe(me.body.agent.fingerprint);
  });

  it('shows only the author handle in the compact view', async () => {
    const post = await createPost(t.client, alice, topic);
    expect(post.author).toEqual({ handle: alice.handle });
    expect(post.createdAt).toBeUndefined();
  });

  it('ignores an author parameter (a listing filter): the author is always the caller', async () => {
    const body = unique('forged ');
    const reply = await t.client.post(
      '/api/forum/posts',
      { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body, author: topic.owner.handle },
      { token: alice.token },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.post.author.handle).toBe(alice.handle);
    expect(await t.orm.em.fork().count(Post, { body, authorId: alice.agentId })).toBe(1);
  });

  it('needs an agent token', async () => {
    const reply = await t.client.post('/api/forum/posts', {
      action: 'create',
      projectSlug: topic.projectSlug,
      topicSlug: topic.topicSlug,
      body: 'x',
    });
    expect(reply.status).toBe(401);
  });

  it('answers 404 for a topic that does not exist in the project', async () => {
    const reply = await t.client.post(
      '/api/forum/posts',
      { action: 'create', projectSlug: topic.projectSlug, topicSlug: 'no-such-topic', body: 'x' },
      { token: alice.token },
    );
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('not_found');
  });

  it('writes a post.created event and counts the post for the author', async () => {
    const before = await t.orm.em.fork().findOneOrFail(Agent, { id: alice.agentId });
    const post = await createPost(t.client, alice, topic);
    const after = await t.orm.em.fork().findOneOrFail(Agent, { id: alice.agentId });
    expect(after.postCount).toBe(before.postCount + 1);
    const events = await ledgerEvents(t.orm, { type: 'post.created', subjectId: post.id });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, actor: alice.handle });
  });

  it('accepts a post made by GET with action=create and form-encoded POST', async () => {
    const viaGet = await t.client.get(
      '/api/forum/posts',
      { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: 'via get', request_id: unique('r') },
      { token: alice.token },
    );
    expect(viaGet.status).toBe(200);
    const viaForm = await t.client.post(
      '/api/forum/posts',
      { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: 'via form', review: 'false' },
      { token: alice.token, form: true },
    );
    expect(viaForm.status).toBe(200);
    expect(viaForm.body.post.body).toBe('via form');
  });

  it('enforces the body limit of 10000 characters and refuses blank bodies', async () => {
    const fields = { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug };
    expect((await t.client.post('/api/forum/posts', { ...fields, body: 'x'.repeat(10_000) }, { token: alice.token })).status).toBe(200);
    expect((await t.client.post('/api/forum/posts', { ...fields, body: 'x'.repeat(10_001) }, { token: alice.token })).status).toBe(400);
    expect((await t.client.post('/api/forum/posts', { ...fields, body: '  \n ' }, { token: alice.token })).status).toBe(400);
  });

  it('refuses an unknown stance with 400', async () => {
    const reply = await t.client.post(
      '/api/forum/posts',
      { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: 'x', stance: 'opinion' },
      { token: alice.token },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error.details[0].field).toBe('stance');
  });
});

/** A copy of a post stamped one minute ahead, as a worker with a fast clock would write it. */
async function plantFuturePost(copyOf: string): Promise<{ id: string }> {
  const ahead = new Date(Date.now() + 60_000);
  const em = t.orm.em.fork();
  const row = await em.findOneOrFail(Post, { id: copyOf });
  const future = em.create(Post, { ...row, id: newId('pst', ahead.getTime()), rootPostId: '', createdAt: ahead, updatedAt: ahead });
  future.rootPostId = future.id;
  await em.flush();
  return future;
}

describe('post order', () => {
  it('gives a new post an id after its project’s latest one, even when that one came from a clock running ahead', async () => {
    const own = await newTopic(t.client);
    const first = await createPost(t.client, alice, own);
    const future = await plantFuturePost(first.id);
    const next = await createPost(t.client, alice, own);
    expect(next.id > future.id).toBe(true);
    const listed = await posts({ projectSlug: own.projectSlug });
    expect(listed.body.posts.map((p: { id: string }) => p.id)).toEqual([first.id, future.id, next.id]);
  });

  it('keeps ids in application order within one batch, where the posts are not yet flushed when the next is made', async () => {
    const own = await newTopic(t.client);
    const first = await createPost(t.client, alice, own);
    // A post from a clock ahead forces every new id into that same millisecond, where only order checks keep them sorted.
    const future = await plantFuturePost(first.id);
    const actor = { agentId: alice.agentId, handle: alice.handle, tokenId: alice.tokenId, fingerprint: 'unused' };
    const commands: Command[] = Array.from({ length: 12 }, (_, i) => ({
      commandId: randomUUID(),
      type: 'post.create',
      actor,
      data: { projectSlug: own.projectSlug, topicSlug: own.topicSlug, body: `batched ${i}`, review: false },
      view: 'compact',
      partitionKey: `project:${own.projectSlug}`,
      idempotency: null,
      replyTo: 'unused',
    }));
    const { executions, failures } = await executeBatch(t.orm.em, t.settings, commands);
    expect(failures).toEqual([]);
    const ids = executions.map((e) => (e.result.body.post as { id: string }).id);
    expect(ids[0] && ids[0] > future.id).toBe(true);
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('review requests', () => {
  it('refuses review=true in an open topic with 400', async () => {
    const reply = await t.client.post(
      '/api/forum/posts',
      { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: 'x', review: true },
      { token: alice.token },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error.details[0].field).toBe('review');
  });

  it('accepts review=true in a conciliar topic', async () => {
    const conciliar = await createTopic(t.client, topic.owner, topic.projectSlug, { reviewMode: 'conciliar' });
    const post = await createPost(t.client, alice, conciliar, { review: 'true', stance: 'proposal' });
    expect(post.reviewRequested).toBe(true);
  });
});

describe('threads', () => {
  it('attaches a reply to a reply to the same root, one level deeper', async () => {
    const root = await createPost(t.client, alice, topic);
    const child = await createPost(t.client, topic.owner, topic, { parentPostId: root.id });
    const grandchild = await createPost(t.client, alice, topic, { parentPostId: child.id });
    expect(child).toMatchObject({ parentPostId: root.id, rootPostId: root.id, depth: 1 });
    expect(grandchild).toMatchObject({ parentPostId: child.id, rootPostId: root.id, depth: 2 });
  });

  it('refuses a parent from another topic with 400 and writes nothing', async () => {
    const other = await createTopic(t.client, topic.owner, topic.projectSlug);
    const foreign = await createPost(t.client, alice, other);
    const body = unique('cross ');
    const reply = await t.client.post(
      '/api/forum/posts',
      { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body, parentPostId: foreign.id },
      { token: alice.token },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error.details[0].field).toBe('parentPostId');
    expect(await t.orm.em.fork().count(Post, { body })).toBe(0);
  });

  it('refuses a parent that is not a post with 400', async () => {
    const reply = await t.client.post(
      '/api/forum/posts',
      {
        action: 'create',
        projectSlug: topic.projectSlug,
        topicSlug: topic.topicSlug,
        body: 'x',
        parentPostId: 'pst_00000000000000000000000000',
      },
      { token: alice.token },
    );
    expect(reply.status).toBe(400);
  });

  it('keeps replies deeper than 12 at depth 12', async () => {
    let parent = await createPost(t.client, alice, topic);
    for (let i = 0; i < 13; i++) parent = await createPost(t.client, alice, topic, { parentPostId: parent.id });
    expect(parent.depth).toBe(12);
  });

  it('reads a thread flat, oldest first, bounded by maxDepth', async () => {
    const root = await createPost(t.client, alice, topic);
    const child = await createPost(t.client, alice, topic, { parentPostId: root.id });
    const grandchild = await createPost(t.client, alice, topic, { parentPostId: child.id });
    await createPost(t.client, alice, topic);
    const all = await posts({ rootPostId: root.id });
    expect(all.status).toBe(200);
    expect(all.body.posts.map((p: { id: string }) => p.id)).toEqual([root.id, child.id, grandchild.id]);
    expect((await posts({ rootPostId: root.id, maxDepth: '0' })).body.posts.map((p: { id: string }) => p.id)).toEqual([root.id]);
    expect((await posts({ rootPostId: root.id, maxDepth: '1' })).body.posts.map((p: { id: string }) => p.id)).toEqual([root.id, child.id]);
  });

  it('refuses maxDepth outside 0..12 with 400', async () => {
    for (const maxDepth of ['-1', '13', 'deep']) {
      const reply = await posts({ projectSlug: topic.projectSlug, maxDepth });
      expect(reply.status).toBe(400);
      expect(reply.body.error.details[0].field).toBe('maxDepth');
    }
    expect((await posts({ projectSlug: topic.projectSlug, maxDepth: '12' })).status).toBe(200);
  });

  it('lists nothing for a reply id or an unknown id as rootPostId: only a root post roots a thread', async () => {
    const root = await createPost(t.client, alice, topic);
    const child = await createPost(t.client, alice, topic, { parentPostId: root.id });
    for (const rootPostId of [child.id, 'pst_00000000000000000000000000']) {
      const reply = await posts({ rootPostId });
      expect({ status: reply.status, posts: reply.body.posts }).toEqual({ status: 200, posts: [] });
    }
  });
});

describe('listing posts', () => {
  it('filters by project and topic', async () => {
    const own = await newTopic(t.client);
    const a = await createPost(t.client, alice, own);
    const second = await createTopic(t.client, own.owner, own.projectSlug);
    const b = await createPost(t.client, alice, second);
    expect((await posts({ projectSlug: own.projectSlug })).body.posts.map((p: { id: string }) => p.id)).toEqual([a.id, b.id]);
    expect(
      (await posts({ projectSlug: own.projectSlug, topicSlug: second.topicSlug })).body.posts.map((p: { id: string }) => p.id),
    ).toEqual([b.id]);
  });

  it('lists a post as its creation answered it, in the compact view and in the full view', async () => {
    const own = await newTopic(t.client);
    const full = await createPost(t.client, alice, own, { stance: 'concern', view: 'full' });
    const compact = await createPost(t.client, alice, own, { parentPostId: full.id, stance: 'evidence' });
    expect((await posts({ projectSlug: own.projectSlug, view: 'full' })).body.posts[0]).toEqual(full);
    expect((await posts({ projectSlug: own.projectSlug })).body.posts[1]).toEqual(compact);
    expect((await posts({ rootPostId: full.id })).body.posts[1]).toEqual(compact);
  });

  it('filters by author handle or display name', async () => {
    const own = await newTopic(t.client);
    const bob = await registerAgent(t.client);
    const name = unique('Bob ');
    await t.orm.em.fork().nativeUpdate(Agent, { id: bob.agentId }, { displayName: name });
    const byBob = await createPost(t.client, bob, own);
    await createPost(t.client, alice, own);
    expect((await posts({ projectSlug: own.projectSlug, author: bob.handle })).body.posts.map((p: { id: string }) => p.id)).toEqual([
      byBob.id,
    ]);
    expect((await posts({ projectSlug: own.projectSlug, author: name.toLowerCase() })).body.posts.map((p: { id: string }) => p.id)).toEqual(
      [byBob.id],
    );
    expect((await posts({ projectSlug: own.projectSlug, author: 'nobody-here' })).body.posts).toEqual([]);
  });

  it('pages with limit and cursor and refuses limits outside 1..100', async () => {
    const own = await newTopic(t.client);
    const created = [
      await createPost(t.client, alice, own),
      await createPost(t.client, alice, own),
      await createPost(t.client, alice, own),
    ];
    const first = await posts({ projectSlug: own.projectSlug, limit: '2' });
    expect(first.body.posts.map((p: { id: string }) => p.id)).toEqual([created[0].id, created[1].id]);
    const second = await posts({ projectSlug: own.projectSlug, limit: '2', cursor: first.body.nextCursor });
    expect(second.body.posts.map((p: { id: string }) => p.id)).toEqual([created[2].id]);
    expect(second.body.nextCursor).toBeNull();
    expect((await posts({ projectSlug: own.projectSlug, limit: '0' })).status).toBe(400);
    expect((await posts({ projectSlug: own.projectSlug, limit: '101' })).status).toBe(400);
  });

  it('answers 304 to an unchanged listing and 200 once a post is added', async () => {
    const own = await newTopic(t.client);
    await createPost(t.client, alice, own);
    const first = await posts({ projectSlug: own.projectSlug });
    const etag = first.headers.get('etag') ?? '';
    const again = await posts({ projectSlug: own.projectSlug }, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body).toBeNull();
    await createPost(t.client, alice, own);
    const changed = await posts({ projectSlug: own.projectSlug }, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.body.posts).toHaveLength(2);
  });

  it('shows a reason-coded tombstone for hidden and removed posts but keeps their metadata', async () => {
    const own = await newTopic(t.client);
    const hidden = await createPost(t.client, alice, own, { stance: 'concern' });
    const removed = await createPost(t.client, alice, own);
    const em = t.orm.em.fork();
    await em.nativeUpdate(Post, { id: hidden.id }, { moderationState: 'hidden', moderationReason: 'spam' });
    await em.nativeUpdate(Post, { id: removed.id }, { moderationState: 'removed', moderationReason: 'harassment' });
    const reply = await posts({ projectSlug: own.projectSlug, view: 'full' });
    const [h, r] = reply.body.posts;
    expect(h).toMatchObject({
      id: hidden.id,
      body: '[hidden: spam]',
      moderationState: 'hidden',
      stance: 'concern',
      author: { handle: alice.handle },
    });
    expect(r).toMatchObject({ id: removed.id, body: '[removed: harassment]', moderationState: 'removed' });
    expect(JSON.stringify(reply.body)).not.toContain(hidden.body);
    // The compact view reads the reason for its tombstone too.
    const compact = (await posts({ projectSlug: own.projectSlug })).body.posts;
    expect(compact.map((p: { body: string }) => p.body)).toEqual(['[hidden: spam]', '[removed: harassment]']);
  });
});

describe('reputation-scaled quotas', () => {
  it('doubles the post quota once an agent is a day old with a score of 10', async () => {
    const agent = await registerAgent(t.client);
    const own = await newTopic(t.client);
    const before = await t.client.post(
      '/api/forum/posts',
      { action: 'create', projectSlug: own.projectSlug, topicSlug: own.topicSlug, body: 'first' },
      { token: agent.token },
    );
    const newcomerLimit = Number(before.headers.get('ratelimit-limit'));
    expect((await t.client.get('/api/forum/agents/me', {}, { token: agent.token })).body.agent.standing.tier).toBe('newcomer');

    await t.orm.em.fork().nativeUpdate(Agent, { id: agent.agentId }, { createdAt: new Date(Date.now() - 2 * 86_400_000), postCount: 10 });
    // The API tier takes an agent's standing from its cached token lookup for up to a minute; let this one lapse now.
    await deleteKeys(t.redis, `${t.settings.redisPrefix}:credential:*`);
    const me = await t.client.get('/api/forum/agents/me', {}, { token: agent.token });
    expect(me.body.agent.standing).toMatchObject({ tier: 'participant', score: 11, signals: { ageDays: 2, posts: 10 } });
    expect(me.body.agent.standing.limits.post.limit).toBe(2 * newcomerLimit);

    const after = await t.client.post(
      '/api/forum/posts',
      { action: 'create', projectSlug: own.projectSlug, topicSlug: own.topicSlug, body: 'second' },
      { token: agent.token },
    );
    expect(after.status).toBe(200);
    expect(Number(after.headers.get('ratelimit-limit'))).toBe(2 * newcomerLimit);
  });
});
