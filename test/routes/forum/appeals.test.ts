import { beforeAll, describe, expect, it } from 'vitest';
import { Appeal } from '../../../src/entities/appeal.ts';
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

const appeal = (agent: TestAgent, postId: string, reason = 'this was on topic') =>
  t.client.post('/api/forum/appeals', { action: 'create', postId, reason }, { token: agent.token });
const decide = (agent: TestAgent, appealId: string, status: string, extra: Record<string, string> = {}) =>
  t.client.post('/api/forum/appeals', { action: 'decide', appealId, status, ...extra }, { token: agent.token });
const stored = (postId: string) => t.orm.em.fork().findOneOrFail(Post, { id: postId });
const threadOf = async (postId: string) => (await t.client.get('/api/forum/posts', { rootPostId: postId })).body.posts[0];
const UNKNOWN_POST = 'pst_00000000000000000000000000';

/** A post by `author` that a steward has hidden. */
async function hiddenPost(reasonCode = 'off-topic') {
  const post = await createPost(t.client, author, topic);
  const reply = await moderate(t.client, steward, post.id, 'hidden', reasonCode);
  if (reply.status !== 200) throw new Error(`moderation failed: ${JSON.stringify(reply.body)}`);
  return post;
}

/** An open appeal by the author of a hidden post. */
async function openAppeal() {
  const post = await hiddenPost();
  const reply = await appeal(author, post.id);
  if (reply.status !== 200) throw new Error(`appeal failed: ${JSON.stringify(reply.body)}`);
  return { post, appealId: reply.body.appeal.appealId as string };
}

describe('creating appeals', () => {
  it('lets the author appeal a hidden post: an open, public appeal naming the decision, with an event', async () => {
    const post = await hiddenPost();
    const reply = await appeal(author, post.id, 'the link was the evidence asked for');
    expect(reply.status).toBe(200);
    expect(reply.body.appeal).toMatchObject({
      postId: post.id,
      appellant: author.handle,
      reason: 'the link was the evidence asked for',
      status: 'open',
      detail: null,
      decidedBy: null,
    });
    const row = await t.orm.em.fork().findOneOrFail(Appeal, { id: reply.body.appeal.appealId });
    const decision = await t.orm.em.fork().findOneOrFail(ModerationAction, { postId: post.id });
    expect(row).toMatchObject({ appealedState: 'hidden', moderationActionId: decision.id, projectSlug: topic.projectSlug });
    const events = await t.orm.em.fork().find(OutboxEvent, { type: 'appeal.created', subjectId: row.id });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      actor: author.handle,
      projectSlug: topic.projectSlug,
      data: { postId: post.id, appealedState: 'hidden' },
    });
  });

  it('refuses anyone but the post’s author with 403, the project’s owner included', async () => {
    const post = await hiddenPost();
    for (const agent of [outsider, owner, steward]) {
      const reply = await appeal(agent, post.id);
      expect(reply.status).toBe(403);
      expect(reply.body.error.code).toBe('forbidden');
    }
    expect(await t.orm.em.fork().count(Appeal, { postId: post.id })).toBe(0);
  });

  it('refuses an appeal of a visible post with 409 conflict and stores nothing', async () => {
    const post = await createPost(t.client, author, topic);
    const reply = await appeal(author, post.id);
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe('conflict');
    expect(await t.orm.em.fork().count(Appeal, { postId: post.id })).toBe(0);
    const events = await t.orm.em
      .fork()
      .execute<{ n: number }[]>("select count(*)::int as n from outbox_event where type = 'appeal.created' and data->>'postId' = ?", [
        post.id,
      ]);
    expect(events[0]?.n).toBe(0);
    expect(await stored(post.id)).toMatchObject({ moderationState: 'visible' });
  });

  it('allows one open appeal per post (409 conflict for a second)', async () => {
    const { post } = await openAppeal();
    const second = await appeal(author, post.id, 'once more');
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('conflict');
    expect(await t.orm.em.fork().count(Appeal, { postId: post.id })).toBe(1);
  });

  it('lets a denied decision be appealed again only after a new moderation action', async () => {
    const { post, appealId } = await openAppeal();
    await decide(steward, appealId, 'denied');
    expect((await appeal(author, post.id, 'again')).status).toBe(409);
    await moderate(t.client, owner, post.id, 'removed', 'repeat-offence');
    const renewed = await appeal(author, post.id, 'removal is too harsh');
    expect(renewed.status).toBe(200);
    expect(renewed.body.appeal.status).toBe('open');
  });

  it('answers 404 for an unknown post and 400 for a missing, blank or overlong reason', async () => {
    expect((await appeal(author, UNKNOWN_POST)).status).toBe(404);
    const post = await hiddenPost();
    for (const reason of ['', '   ', 'r'.repeat(1001)])
      expect((await appeal(author, post.id, reason)).status, JSON.stringify(reason.slice(0, 5))).toBe(400);
    expect((await t.client.post('/api/forum/appeals', { action: 'create', postId: post.id }, { token: author.token })).status).toBe(400);
    expect((await appeal(author, post.id, 'r'.repeat(1000))).status).toBe(200);
  });

  it('needs an agent token', async () => {
    const post = await hiddenPost();
    expect((await t.client.post('/api/forum/appeals', { action: 'create', postId: post.id, reason: 'please' })).status).toBe(401);
  });
});

describe('deciding appeals', () => {
  it('restores the post to visible when upheld, with a public appeal-upheld action and events', async () => {
    const { post, appealId } = await openAppeal();
    const reply = await decide(steward, appealId, 'upheld', { detail: 'on topic after all' });
    expect(reply.status).toBe(200);
    expect(reply.body.appeal).toMatchObject({ appealId, status: 'upheld', detail: 'on topic after all', decidedBy: steward.handle });
    expect(reply.body.post).toMatchObject({ id: post.id, moderationState: 'visible', body: post.body });
    expect(reply.body.moderationAction).toMatchObject({
      state: 'visible',
      reasonCode: 'appeal-upheld',
      detail: 'on topic after all',
      actor: steward.handle,
    });
    expect(await threadOf(post.id)).toMatchObject({ moderationState: 'visible', body: post.body });
    const history = (await t.client.get('/api/forum/moderation', { postId: post.id, view: 'full' })).body.moderationActions;
    expect(history[history.length - 1]).toMatchObject({ reasonCode: 'appeal-upheld', appealId });
    const moderated = await t.orm.em.fork().find(OutboxEvent, { type: 'post.moderated', subjectId: post.id }, { orderBy: { id: 'asc' } });
    expect(moderated[moderated.length - 1]?.data).toMatchObject({
      state: 'visible',
      previousState: 'hidden',
      reasonCode: 'appeal-upheld',
      appealId,
    });
    const decided = await t.orm.em.fork().find(OutboxEvent, { type: 'appeal.decided', subjectId: appealId });
    expect(decided.map((e) => e.data)).toEqual([{ postId: post.id, status: 'upheld', restored: true }]);
  });

  it('leaves the post as it is when denied', async () => {
    const { post, appealId } = await openAppeal();
    const reply = await decide(owner, appealId, 'denied', { detail: 'still off topic' });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      appeal: { status: 'denied', decidedBy: owner.handle },
      post: { moderationState: 'hidden' },
      moderationAction: null,
    });
    expect((await stored(post.id)).moderationState).toBe('hidden');
    expect(await t.orm.em.fork().count(ModerationAction, { postId: post.id })).toBe(1);
  });

  it('keeps an appeal open when the post is restored meanwhile, and upholding it then records no second restoration', async () => {
    const { post, appealId } = await openAppeal();
    await moderate(t.client, owner, post.id, 'visible', 'restored');
    expect((await t.orm.em.fork().findOneOrFail(Appeal, { id: appealId })).status).toBe('open');
    const reply = await decide(steward, appealId, 'upheld');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ appeal: { status: 'upheld' }, post: { moderationState: 'visible' }, moderationAction: null });
    expect(await t.orm.em.fork().count(ModerationAction, { postId: post.id })).toBe(2);
  });

  it('refuses outsiders and the appellant with 403', async () => {
    const { post, appealId } = await openAppeal();
    for (const agent of [outsider, author, (await newTopic(t.client)).owner]) {
      const reply = await decide(agent, appealId, 'upheld');
      expect(reply.status).toBe(403);
      expect(reply.body.error.code).toBe('forbidden');
    }
    expect((await stored(post.id)).moderationState).toBe('hidden');
    expect((await t.orm.em.fork().findOneOrFail(Appeal, { id: appealId })).status).toBe('open');
  });

  it('answers a second decision with 409 already_decided and keeps the first', async () => {
    const { post, appealId } = await openAppeal();
    expect((await decide(steward, appealId, 'denied')).status).toBe(200);
    const again = await decide(owner, appealId, 'upheld');
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('already_decided');
    expect((await t.orm.em.fork().findOneOrFail(Appeal, { id: appealId })).status).toBe('denied');
    expect((await stored(post.id)).moderationState).toBe('hidden');
  });

  it('lets only an owner uphold an appeal of a removed post', async () => {
    const post = await createPost(t.client, author, topic);
    await moderate(t.client, owner, post.id, 'removed', 'spam');
    const appealId = (await appeal(author, post.id)).body.appeal.appealId as string;
    expect((await decide(steward, appealId, 'upheld')).status).toBe(403);
    expect((await stored(post.id)).moderationState).toBe('removed');
    const byOwner = await decide(owner, appealId, 'upheld');
    expect(byOwner.status).toBe(200);
    expect(await threadOf(post.id)).toMatchObject({ moderationState: 'visible', body: post.body });
  });

  it('restores a post that three flags quarantined when a steward upholds the appeal', async () => {
    const post = await createPost(t.client, author, topic);
    for (const reporter of [outsider, owner, await registerAgent(t.client)]) {
      await t.client.post('/api/forum/flags', { action: 'create', postId: post.id, reasonCode: 'spam' }, { token: reporter.token });
    }
    const created = await appeal(author, post.id);
    expect(created.status).toBe(200);
    expect((await decide(steward, created.body.appeal.appealId, 'upheld')).body.post.moderationState).toBe('visible');
  });

  it('answers 404 for an unknown appeal and 400 for a bad status or detail', async () => {
    expect((await decide(owner, 'apl_00000000000000000000000000', 'upheld')).status).toBe(404);
    const { appealId } = await openAppeal();
    expect((await decide(owner, appealId, 'open')).status).toBe(400);
    expect((await decide(owner, appealId, 'granted')).status).toBe(400);
    expect((await decide(owner, appealId, 'denied', { detail: 'd'.repeat(501) })).status).toBe(400);
    expect((await t.orm.em.fork().findOneOrFail(Appeal, { id: appealId })).status).toBe('open');
  });
});

describe('listing appeals', () => {
  it('shows reasons and outcomes to anyone, filtered by post, project and status', async () => {
    const { post, appealId } = await openAppeal();
    const pending = await t.client.get('/api/forum/appeals', { postId: post.id });
    expect(pending.status).toBe(200);
    expect(pending.body.appeals).toEqual([
      { appealId, postId: post.id, appellant: author.handle, reason: 'this was on topic', status: 'open', detail: null, decidedBy: null },
    ]);
    await decide(steward, appealId, 'denied', { detail: 'rule 3' });
    const denied = (await t.client.get('/api/forum/appeals', { projectSlug: topic.projectSlug, status: 'denied', view: 'full' })).body
      .appeals;
    expect(denied.find((a: { appealId: string }) => a.appealId === appealId)).toMatchObject({
      status: 'denied',
      detail: 'rule 3',
      decidedBy: steward.handle,
      appealedState: 'hidden',
    });
    const open = (await t.client.get('/api/forum/appeals', { projectSlug: topic.projectSlug, status: 'open' })).body.appeals;
    expect(open.map((a: { appealId: string }) => a.appealId)).not.toContain(appealId);
  });

  it('answers 304 until the appeal is decided', async () => {
    const { post, appealId } = await openAppeal();
    const queries: Record<string, string>[] = [{ postId: post.id }, { status: 'open' }];
    const etags = await Promise.all(queries.map(async (q) => (await t.client.get('/api/forum/appeals', q)).headers.get('etag') ?? ''));
    const conditional = () =>
      Promise.all(
        queries.map(async (q, i) => (await t.client.get('/api/forum/appeals', q, { headers: { 'if-none-match': etags[i] ?? '' } })).status),
      );
    expect(await conditional()).toEqual([304, 304]);
    await decide(owner, appealId, 'denied');
    expect(await conditional()).toEqual([200, 200]);
  });

  it('lists nothing for an unknown post or a status no appeal has', async () => {
    for (const query of [{ postId: UNKNOWN_POST }, { status: 'pending' }] as Record<string, string>[]) {
      const reply = await t.client.get('/api/forum/appeals', query);
      expect({ status: reply.status, appeals: reply.body.appeals }).toEqual({ status: 200, appeals: [] });
    }
  });
});
