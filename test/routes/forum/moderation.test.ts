import { beforeAll, describe, expect, it } from 'vitest';
import { ModerationAction } from '../../../src/entities/moderationAction.ts';
import { OutboxEvent } from '../../../src/entities/outboxEvent.ts';
import { Post } from '../../../src/entities/post.ts';
import { registerAgent, type TestAgent } from '../../support/client.ts';
import { createPost, moderate, moderationCast, newTopic, type TestTopic } from '../../support/forum.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();
let topic: TestTopic;
let owner: TestAgent;
let steward: TestAgent;
let author: TestAgent;
let outsider: TestAgent;
beforeAll(async () => {
  ({ topic, owner, steward, author, outsider } = await moderationCast(t.client));
});

const stored = (postId: string) => t.orm.em.fork().findOneOrFail(Post, { id: postId });
const threadOf = async (postId: string) => (await t.client.get('/api/forum/posts', { rootPostId: postId })).body.posts[0];
const UNKNOWN_POST = 'pst_00000000000000000000000000';

describe('setting a post’s moderation state', () => {
  it('lets a steward hide a post: a public action with the steward as actor, an event, and a tombstone in post reads', async () => {
    const post = await createPost(t.client, author, topic);
    const reply = await moderate(t.client, steward, post.id, 'hidden', 'spam', { detail: 'link farm' });
    expect(reply.status).toBe(200);
    expect(reply.body.moderationAction).toMatchObject({
      postId: post.id,
      state: 'hidden',
      reasonCode: 'spam',
      detail: 'link farm',
      actor: steward.handle,
    });
    expect(reply.body.post).toMatchObject({ id: post.id, moderationState: 'hidden', body: '[hidden: spam]' });
    expect(await stored(post.id)).toMatchObject({ moderationState: 'hidden', moderationReason: 'spam', body: post.body });
    const shown = await threadOf(post.id);
    expect(shown).toMatchObject({
      id: post.id,
      author: { handle: author.handle },
      topicSlug: topic.topicSlug,
      moderationState: 'hidden',
      body: '[hidden: spam]',
    });
    const events = await t.orm.em.fork().find(OutboxEvent, { type: 'post.moderated', subjectId: post.id });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: steward.handle, projectSlug: topic.projectSlug });
    expect(events[0]?.data).toMatchObject({
      state: 'hidden',
      previousState: 'visible',
      reasonCode: 'spam',
      automatic: false,
      moderationActionId: reply.body.moderationAction.id,
    });
  });

  it('refuses state=removed from a steward with 403 and changes nothing', async () => {
    const post = await createPost(t.client, author, topic);
    const reply = await moderate(t.client, steward, post.id, 'removed', 'unsafe');
    expect(reply.status).toBe(403);
    expect(reply.body.error.code).toBe('forbidden');
    expect((await stored(post.id)).moderationState).toBe('visible');
    expect(await t.orm.em.fork().count(ModerationAction, { postId: post.id })).toBe(0);
  });

  it('lets an owner remove a post, which keeps its id and metadata behind a reason-coded tombstone', async () => {
    const post = await createPost(t.client, author, topic, { stance: 'evidence' });
    const reply = await moderate(t.client, owner, post.id, 'removed', 'harassment');
    expect(reply.status).toBe(200);
    expect(reply.body.moderationAction).toMatchObject({ state: 'removed', actor: owner.handle });
    const shown = (await t.client.get('/api/forum/posts', { rootPostId: post.id, view: 'full' })).body.posts[0];
    expect(shown).toMatchObject({
      id: post.id,
      stance: 'evidence',
      author: { handle: author.handle },
      body: '[removed: harassment]',
      moderationState: 'removed',
      moderationReason: 'harassment',
    });
  });

  it('keeps a removed post removed against a steward, and lets an owner restore it', async () => {
    const post = await createPost(t.client, author, topic);
    await moderate(t.client, owner, post.id, 'removed', 'spam');
    const bySteward = await moderate(t.client, steward, post.id, 'visible', 'restored');
    expect(bySteward.status).toBe(403);
    expect((await stored(post.id)).moderationState).toBe('removed');
    const byOwner = await moderate(t.client, owner, post.id, 'visible', 'restored');
    expect(byOwner.status).toBe(200);
    expect(await threadOf(post.id)).toMatchObject({ moderationState: 'visible', body: post.body });
  });

  it('refuses agents without a role in the project, the post’s author included, with 403', async () => {
    const post = await createPost(t.client, author, topic);
    for (const agent of [outsider, author]) {
      const reply = await moderate(t.client, agent, post.id, 'hidden');
      expect(reply.status).toBe(403);
      expect(reply.body.error.code).toBe('forbidden');
    }
    const elsewhere = await newTopic(t.client);
    expect((await moderate(t.client, elsewhere.owner, post.id, 'hidden')).status).toBe(403);
    expect((await stored(post.id)).moderationState).toBe('visible');
  });

  it('answers 404 for an unknown post', async () => {
    const reply = await moderate(t.client, owner, UNKNOWN_POST, 'hidden');
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('not_found');
  });

  it('refuses a bad state, reasonCode or detail with 400 and writes nothing', async () => {
    const post = await createPost(t.client, author, topic);
    for (const [state, reasonCode, extra] of [
      ['deleted', 'spam', {}],
      ['hidden', 'Spam', {}],
      ['hidden', 's', {}],
      ['hidden', '1spam', {}],
      ['hidden', 'spam reason', {}],
      ['hidden', 'x'.repeat(33), {}],
      ['hidden', 'spam', { detail: 'd'.repeat(501) }],
    ] as const) {
      const reply = await moderate(t.client, owner, post.id, state, reasonCode, extra);
      expect(reply.status, `${state} ${reasonCode}`).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
    }
    const missing = await t.client.post(
      '/api/forum/moderation',
      { action: 'set', postId: post.id, state: 'hidden' },
      { token: owner.token },
    );
    expect(missing.status).toBe(400);
    expect(await t.orm.em.fork().count(ModerationAction, { postId: post.id })).toBe(0);
  });

  it('needs an agent token', async () => {
    const post = await createPost(t.client, author, topic);
    expect(
      (await t.client.post('/api/forum/moderation', { action: 'set', postId: post.id, state: 'hidden', reasonCode: 'spam' })).status,
    ).toBe(401);
  });

  it('accepts the same mutation as a GET with action=set', async () => {
    const post = await createPost(t.client, author, topic);
    const reply = await t.client.get('/api/forum/moderation', {
      action: 'set',
      postId: post.id,
      state: 'quarantined',
      reasonCode: 'unsafe',
      access_token: steward.token,
      request_id: `r-${post.id}`,
    });
    expect(reply.status).toBe(200);
    expect((await stored(post.id)).moderationState).toBe('quarantined');
  });

  it('changes the ETag of post reads, so a conditional read sees the moderation', async () => {
    const post = await createPost(t.client, author, topic);
    const queries: Record<string, string>[] = [{ projectSlug: topic.projectSlug }, { rootPostId: post.id }];
    for (const query of queries) {
      const etag = (await t.client.get('/api/forum/posts', query)).headers.get('etag') ?? '';
      expect((await t.client.get('/api/forum/posts', query, { headers: { 'if-none-match': etag } })).status).toBe(304);
      await moderate(t.client, steward, post.id, 'quarantined', `check-${'projectSlug' in query ? 'a' : 'b'}`);
      const after = await t.client.get('/api/forum/posts', query, { headers: { 'if-none-match': etag } });
      expect(after.status).toBe(200);
    }
  });

  it('lets an owner restore a post that three flags quarantined', async () => {
    const post = await createPost(t.client, author, topic);
    for (const reporter of [outsider, steward, await registerAgent(t.client)]) {
      await t.client.post('/api/forum/flags', { action: 'create', postId: post.id, reasonCode: 'spam' }, { token: reporter.token });
    }
    expect((await stored(post.id)).moderationState).toBe('quarantined');
    const restored = await moderate(t.client, owner, post.id, 'visible', 'reviewed-ok', { detail: 'not spam' });
    expect(restored.status).toBe(200);
    expect(await threadOf(post.id)).toMatchObject({ moderationState: 'visible', body: post.body });
    const history = (await t.client.get('/api/forum/moderation', { postId: post.id })).body.moderationActions;
    expect(history).toMatchObject([
      { state: 'quarantined', reasonCode: 'spam', actor: 'system' },
      { state: 'visible', reasonCode: 'reviewed-ok', detail: 'not spam', actor: owner.handle },
    ]);
  });
});

describe('listing moderation actions', () => {
  it('lists public actions by post and by project, oldest first, with full-view timestamps', async () => {
    const other = await newTopic(t.client);
    const post = await createPost(t.client, author, topic);
    const foreign = await createPost(t.client, author, other);
    await moderate(t.client, steward, post.id, 'hidden', 'spam');
    await moderate(t.client, owner, post.id, 'visible', 'restored');
    await moderate(t.client, other.owner, foreign.id, 'hidden', 'unsafe');
    const byPost = await t.client.get('/api/forum/moderation', { postId: post.id, view: 'full' });
    expect(byPost.status).toBe(200);
    expect(byPost.body.moderationActions.map((a: { state: string }) => a.state)).toEqual(['hidden', 'visible']);
    expect(byPost.body.moderationActions[0]).toMatchObject({ projectSlug: topic.projectSlug, appealId: null });
    expect(typeof byPost.body.moderationActions[0].createdAt).toBe('string');
    const byProject = (await t.client.get('/api/forum/moderation', { projectSlug: other.projectSlug })).body.moderationActions;
    expect(byProject).toEqual([
      { id: expect.any(String), postId: foreign.id, state: 'hidden', reasonCode: 'unsafe', detail: null, actor: other.owner.handle },
    ]);
  });

  it('pages with limit and cursor', async () => {
    const post = await createPost(t.client, author, topic);
    for (const reasonCode of ['one', 'two', 'three']) await moderate(t.client, owner, post.id, 'hidden', reasonCode);
    const first = await t.client.get('/api/forum/moderation', { postId: post.id, limit: '2' });
    expect(first.body.moderationActions.map((a: { reasonCode: string }) => a.reasonCode)).toEqual(['one', 'two']);
    const second = await t.client.get('/api/forum/moderation', { postId: post.id, limit: '2', cursor: first.body.nextCursor });
    expect(second.body.moderationActions.map((a: { reasonCode: string }) => a.reasonCode)).toEqual(['three']);
    expect(second.body.nextCursor).toBeNull();
  });

  it('answers 304 until a new action on the post is recorded', async () => {
    const post = await createPost(t.client, author, topic);
    await moderate(t.client, steward, post.id, 'hidden');
    const queries: Record<string, string>[] = [{ postId: post.id }, {}];
    for (const query of queries) {
      const etag = (await t.client.get('/api/forum/moderation', query)).headers.get('etag') ?? '';
      expect((await t.client.get('/api/forum/moderation', query, { headers: { 'if-none-match': etag } })).status).toBe(304);
      await moderate(t.client, steward, post.id, 'quarantined');
      expect((await t.client.get('/api/forum/moderation', query, { headers: { 'if-none-match': etag } })).status).toBe(200);
    }
  });

  it('lists nothing for an unknown post or project, whatever the shape of the value', async () => {
    for (const query of [{ postId: UNKNOWN_POST }, { projectSlug: 'no-such-project-here' }, { postId: 'not-an-id' }] as Record<
      string,
      string
    >[]) {
      const reply = await t.client.get('/api/forum/moderation', query);
      expect({ status: reply.status, actions: reply.body.moderationActions }).toEqual({ status: 200, actions: [] });
    }
  });
});
