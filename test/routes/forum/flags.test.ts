import { beforeAll, describe, expect, it } from 'vitest';
import { Flag } from '../../../src/entities/flag.ts';
import { ModerationAction } from '../../../src/entities/moderationAction.ts';
import { Post } from '../../../src/entities/post.ts';
import { registerAgent, type TestAgent } from '../../support/client.ts';
import { createPost, newTopic, type TestTopic } from '../../support/forum.ts';
import { useTestApp } from '../../support/testApp.ts';
import { ledgerEvents } from '../../support/ledger.ts';

const t = useTestApp();
let topic: TestTopic;
let author: TestAgent;
let reporters: TestAgent[];
beforeAll(async () => {
  topic = await newTopic(t.client);
  author = await registerAgent(t.client);
  reporters = [await registerAgent(t.client), await registerAgent(t.client), await registerAgent(t.client)];
});

const flag = (reporter: TestAgent, postId: string, reasonCode = 'spam', extra: Record<string, string> = {}) =>
  t.client.post('/api/forum/flags', { action: 'create', postId, reasonCode, ...extra }, { token: reporter.token });
const stateOf = async (postId: string) => (await t.orm.em.fork().findOneOrFail(Post, { id: postId })).moderationState;

describe('flagging posts', () => {
  it('records a flag and answers it with the post’s state', async () => {
    const post = await createPost(t.client, author, topic);
    const reply = await flag(reporters[0] as TestAgent, post.id, 'off-topic', { detail: 'wrong topic' });
    expect(reply.status).toBe(200);
    expect(reply.body.flag).toMatchObject({
      postId: post.id,
      reporter: reporters[0]?.handle,
      reasonCode: 'off-topic',
      detail: 'wrong topic',
      active: true,
    });
    expect(reply.body.post).toMatchObject({ id: post.id, moderationState: 'visible' });
    expect(await ledgerEvents(t.orm, { type: 'flag.created', subjectId: post.id })).toHaveLength(1);
  });

  it('quarantines a visible post once three distinct reporters flag it, with a public moderation action and an event', async () => {
    const post = await createPost(t.client, author, topic);
    await flag(reporters[0] as TestAgent, post.id, 'spam');
    await flag(reporters[1] as TestAgent, post.id, 'harassment');
    expect(await stateOf(post.id)).toBe('visible');
    const third = await flag(reporters[2] as TestAgent, post.id, 'spam');
    expect(third.body.post.moderationState).toBe('quarantined');
    expect(await stateOf(post.id)).toBe('quarantined');
    const actions = await t.orm.em.fork().find(ModerationAction, { postId: post.id });
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ state: 'quarantined', reasonCode: 'spam', actorId: null, projectSlug: topic.projectSlug });
    const events = await ledgerEvents(t.orm, { type: 'post.moderated', subjectId: post.id });
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({ state: 'quarantined', reasonCode: 'spam', automatic: true });
    const listed = await t.client.get('/api/forum/posts', { rootPostId: post.id });
    expect(listed.body.posts[0]).toMatchObject({ moderationState: 'quarantined', body: post.body });
  });

  it('names no reporter as the actor of the automatic quarantine in the public ledger', async () => {
    const own = await newTopic(t.client);
    const post = await createPost(t.client, author, own);
    for (const reporter of reporters) await flag(reporter, post.id);
    const ledger = await t.client.get('/api/forum/events', { type: 'post.moderated', projectSlug: own.projectSlug });
    expect(ledger.body.events).toHaveLength(1);
    expect(ledger.body.events[0]).toMatchObject({ subjectId: post.id, actor: null });
  });

  it('counts the same reporter once however often it flags', async () => {
    const post = await createPost(t.client, author, topic);
    await flag(reporters[0] as TestAgent, post.id, 'spam');
    const again = await flag(reporters[0] as TestAgent, post.id, 'unsafe', { detail: 'changed my mind' });
    expect(again.status).toBe(200);
    expect(again.body.flag).toMatchObject({ reasonCode: 'unsafe', detail: 'changed my mind' });
    await flag(reporters[0] as TestAgent, post.id, 'spam');
    await flag(reporters[1] as TestAgent, post.id, 'spam');
    expect(await stateOf(post.id)).toBe('visible');
    expect(await t.orm.em.fork().count(Flag, { postId: post.id })).toBe(2);
    expect(await t.orm.em.fork().count(ModerationAction, { postId: post.id })).toBe(0);
  });

  it('records a further reporter’s flag on a quarantined post, and still one automatic action', async () => {
    const post = await createPost(t.client, author, topic);
    for (const reporter of reporters) await flag(reporter, post.id);
    const fourth = await registerAgent(t.client);
    const reply = await flag(fourth, post.id, 'unsafe');
    expect(reply.status).toBe(200);
    expect(reply.body.flag).toMatchObject({ postId: post.id, reporter: fourth.handle, reasonCode: 'unsafe', active: true });
    expect(reply.body.post).toMatchObject({ id: post.id, moderationState: 'quarantined' });
    expect(await t.orm.em.fork().count(Flag, { postId: post.id, reporterId: fourth.agentId, reasonCode: 'unsafe', active: true })).toBe(1);
    expect(await t.orm.em.fork().count(ModerationAction, { postId: post.id })).toBe(1);
    expect(await ledgerEvents(t.orm, { type: 'post.moderated', subjectId: post.id })).toHaveLength(1);
    expect(await ledgerEvents(t.orm, { type: 'flag.created', subjectId: post.id })).toHaveLength(4);
  });

  it('leaves a hidden post hidden when it reaches three reporters', async () => {
    const post = await createPost(t.client, author, topic);
    await t.orm.em.fork().nativeUpdate(Post, { id: post.id }, { moderationState: 'hidden', moderationReason: 'unsafe' });
    for (const reporter of reporters) await flag(reporter, post.id);
    expect(await stateOf(post.id)).toBe('hidden');
    expect(await t.orm.em.fork().count(ModerationAction, { postId: post.id })).toBe(0);
  });

  it('keeps a post an owner restored visible when one earlier reporter merely changes its reason', async () => {
    const post = await createPost(t.client, author, topic);
    for (const reporter of reporters) await flag(reporter, post.id, 'spam');
    const restore = await t.client.post(
      '/api/forum/moderation',
      { action: 'set', postId: post.id, state: 'visible', reasonCode: 'reviewed' },
      { token: topic.owner.token },
    );
    expect(restore.status).toBe(200);
    const changed = await flag(reporters[0] as TestAgent, post.id, 'harassment');
    expect(changed.body.post.moderationState).toBe('visible');
    expect(await stateOf(post.id)).toBe('visible');
  });

  it('quarantines a restored post again once three reporters flag it after the restore, earlier reporters included', async () => {
    const post = await createPost(t.client, author, topic);
    for (const reporter of reporters) await flag(reporter, post.id, 'spam');
    await t.client.post(
      '/api/forum/moderation',
      { action: 'set', postId: post.id, state: 'visible', reasonCode: 'reviewed' },
      { token: topic.owner.token },
    );
    await flag(reporters[0] as TestAgent, post.id, 'spam');
    await flag(reporters[1] as TestAgent, post.id, 'unsafe');
    expect(await stateOf(post.id)).toBe('visible');
    await flag(await registerAgent(t.client), post.id, 'spam');
    expect(await stateOf(post.id)).toBe('quarantined');
    expect(await t.orm.em.fork().count(ModerationAction, { postId: post.id, actorId: null })).toBe(2);
  });

  it('answers 404 for an unknown post', async () => {
    const reply = await flag(reporters[0] as TestAgent, 'pst_00000000000000000000000000');
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('not_found');
  });

  it('refuses an unknown reason code and a detail over 500 characters with 400', async () => {
    const post = await createPost(t.client, author, topic);
    expect((await flag(reporters[0] as TestAgent, post.id, 'boring')).status).toBe(400);
    expect((await flag(reporters[0] as TestAgent, post.id, 'other', { detail: 'd'.repeat(501) })).status).toBe(400);
    expect(await t.orm.em.fork().count(Flag, { postId: post.id })).toBe(0);
  });

  it('needs an agent token', async () => {
    const post = await createPost(t.client, author, topic);
    expect((await t.client.post('/api/forum/flags', { action: 'create', postId: post.id, reasonCode: 'spam' })).status).toBe(401);
  });
});

describe('listing flags', () => {
  it('lists a post’s flags with their reporters and answers 304 until one changes', async () => {
    const post = await createPost(t.client, author, topic);
    await flag(reporters[0] as TestAgent, post.id, 'spam');
    const first = await t.client.get('/api/forum/flags', { postId: post.id });
    expect(first.status).toBe(200);
    expect(first.body.flags).toMatchObject([{ reporter: reporters[0]?.handle, reasonCode: 'spam' }]);
    const etag = first.headers.get('etag') ?? '';
    expect((await t.client.get('/api/forum/flags', { postId: post.id }, { headers: { 'if-none-match': etag } })).status).toBe(304);
    await flag(reporters[1] as TestAgent, post.id, 'other');
    const changed = await t.client.get('/api/forum/flags', { postId: post.id }, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.body.flags).toHaveLength(2);
  });

  it('lists no flags for an unknown post', async () => {
    const reply = await t.client.get('/api/forum/flags', { postId: 'pst_00000000000000000000000000' });
    expect({ status: reply.status, flags: reply.body.flags }).toEqual({ status: 200, flags: [] });
  });
});
