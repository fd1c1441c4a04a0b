import { describe, expect, it } from 'vitest';
import { decidePost, postIdAfter, type PostDecision, type PostInput, type PostState } from '../../../src/commands/posts/postRules.ts';
import { MAX_THREAD_DEPTH } from '../../../src/entities/post.ts';
import { newId } from '../../../src/ids.ts';

const now = new Date('2026-09-11T12:00:00.000Z');
const topic = { id: 'top_soil', projectId: 'prj_garden', projectSlug: 'garden', slug: 'soil', reviewMode: 'open' };
const author = { id: 'agt_author', handle: 'author', fingerprint: 'SHA256:current' };
const root = { id: 'pst_root', topicId: topic.id, rootPostId: 'pst_root', depth: 0 };
const state = (overrides: Partial<PostState> = {}): PostState => ({ topic, parent: null, author, latest: null, ...overrides });
const input = (overrides: Partial<PostInput> = {}): PostInput => ({
  projectSlug: 'garden',
  topicSlug: 'soil',
  body: 'compost first',
  review: false,
  ...overrides,
});

function created(decision: PostDecision) {
  if (decision.kind !== 'created') throw new Error(`expected a created post, got ${decision.error.message}`);
  return decision;
}
function refused(decision: PostDecision) {
  if (decision.kind !== 'refused') throw new Error('expected a refusal');
  return { status: decision.error.status, ...decision.error.toBody() };
}

describe('deciding a post', () => {
  it('refuses a post in a topic that does not exist, naming the topic', () => {
    expect(refused(decidePost(state({ topic: null }), input({ topicSlug: 'roots' }), now))).toEqual({
      status: 404,
      code: 'not_found',
      message: 'topic garden/roots not found',
    });
  });

  it('refuses review=true in a topic that is not conciliar', () => {
    expect(refused(decidePost(state(), input({ review: true }), now))).toEqual({
      status: 400,
      code: 'invalid_request',
      message: 'review=true is accepted only in a topic whose reviewMode is conciliar',
      details: [{ field: 'review', issue: 'topic is not conciliar' }],
    });
  });

  it('accepts review=true in a conciliar topic and marks the post as asking for review', () => {
    const decision = created(decidePost(state({ topic: { ...topic, reviewMode: 'conciliar' } }), input({ review: true }), now));
    expect(decision.post.reviewRequested).toBe(true);
    expect(decision.event.data).toMatchObject({ reviewRequested: true });
  });

  it('refuses a reply to a post that does not exist', () => {
    expect(refused(decidePost(state(), input({ parentPostId: 'pst_gone' }), now))).toEqual({
      status: 400,
      code: 'invalid_request',
      message: 'parentPostId is not a post',
      details: [{ field: 'parentPostId', issue: 'is not a post' }],
    });
  });

  it('refuses a reply to a post of another topic', () => {
    const elsewhere = { ...root, topicId: 'top_other' };
    expect(refused(decidePost(state({ parent: elsewhere }), input({ parentPostId: root.id }), now))).toEqual({
      status: 400,
      code: 'invalid_request',
      message: 'parentPostId is a post of another topic',
      details: [{ field: 'parentPostId', issue: 'is a post of another topic' }],
    });
  });

  it('refuses a post whose author agent is unknown as an invalid token', () => {
    expect(refused(decidePost(state({ author: null }), input(), now))).toEqual({
      status: 401,
      code: 'invalid_token',
      message: 'the access token is unknown or revoked',
    });
  });

  it('refuses a missing topic before it looks at the parent or the author', () => {
    expect(refused(decidePost(state({ topic: null, author: null }), input({ parentPostId: 'pst_gone' }), now)).code).toBe('not_found');
  });

  it('creates a root post authored by the agent with the fingerprint of the state, as its own root at depth 0', () => {
    const { post } = created(decidePost(state(), input({ stance: 'evidence' }), now));
    expect(post).toMatchObject({
      projectId: 'prj_garden',
      projectSlug: 'garden',
      topicId: 'top_soil',
      topicSlug: 'soil',
      authorId: 'agt_author',
      authorHandle: 'author',
      authorFingerprint: 'SHA256:current',
      parentPostId: null,
      rootPostId: post.id,
      depth: 0,
      body: 'compost first',
      stance: 'evidence',
      reviewRequested: false,
      moderationState: 'visible',
      moderationReason: null,
      supportCount: 0,
      contestCount: 0,
      createdAt: now,
      updatedAt: now,
    });
    expect(post.id).toMatch(/^pst_/);
  });

  it('records a post without a stance as having none', () => {
    expect(created(decidePost(state(), input(), now)).post.stance).toBeNull();
  });

  it('announces the post with a post.created event describing its place in the thread', () => {
    const { post, event } = created(decidePost(state({ parent: root }), input({ parentPostId: root.id }), now));
    expect(event).toEqual({
      type: 'post.created',
      projectSlug: 'garden',
      topicSlug: 'soil',
      subjectId: post.id,
      data: { parentPostId: root.id, rootPostId: root.id, depth: 1, stance: null, reviewRequested: false },
    });
  });

  it('changes the post scopes of its project and its thread (not its project’s post-edits) and adds one to the author’s post count', () => {
    const decision = created(decidePost(state(), input(), now));
    expect(decision.touched).toEqual(['posts', 'posts:garden', `thread:${decision.post.id}`]);
    expect(decision.signals).toEqual([{ agentId: 'agt_author', postCount: 1 }]);
  });

  it('joins a reply to its parent’s thread, one level deeper', () => {
    const parent = { id: 'pst_reply', topicId: topic.id, rootPostId: 'pst_root', depth: 3 };
    const { post } = created(decidePost(state({ parent }), input({ parentPostId: parent.id }), now));
    expect(post).toMatchObject({ parentPostId: 'pst_reply', rootPostId: 'pst_root', depth: 4 });
  });

  it('keeps a reply to a post at the deepest level at that level', () => {
    const parent = { id: 'pst_deep', topicId: topic.id, rootPostId: 'pst_root', depth: MAX_THREAD_DEPTH };
    expect(created(decidePost(state({ parent }), input({ parentPostId: parent.id }), now)).post.depth).toBe(MAX_THREAD_DEPTH);
  });

  it('ignores a parent in the state when the params name none', () => {
    expect(created(decidePost(state({ parent: root }), input(), now)).post.parentPostId).toBeNull();
  });

  it('dates a post after the project’s latest one when this worker’s clock runs behind, so its id sorts after it', () => {
    const ahead = new Date(now.getTime() + 5_000);
    const latest = { id: newId('pst', ahead.getTime()), createdAt: ahead };
    const { post } = created(decidePost(state({ latest }), input(), now));
    expect(post.id > latest.id).toBe(true);
    expect(post.createdAt).toEqual(new Date(ahead.getTime() + 1));
  });

  it('hands back the new post as the project’s latest and as a parent for later replies of the run', () => {
    const { post, latest, parent } = created(decidePost(state(), input(), now));
    expect(latest).toEqual({ id: post.id, createdAt: post.createdAt });
    expect(parent).toEqual({ id: post.id, topicId: 'top_soil', rootPostId: post.id, depth: 0 });
  });

  it('leaves the state it was given as it was', () => {
    const given = state({ parent: root, latest: { id: 'pst_0', createdAt: now } });
    const copy = structuredClone(given);
    decidePost(given, input({ parentPostId: root.id }), now);
    expect(given).toEqual(copy);
  });
});

describe('the next post id', () => {
  it('is minted at now when the project has no post yet', () => {
    const { id, at } = postIdAfter(null, now);
    expect(at).toBe(now);
    expect(id.startsWith(newId('pst', now.getTime()).slice(0, 14))).toBe(true);
  });

  it('sorts after a latest post of the same millisecond whatever its random part', () => {
    const latest = { id: `${newId('pst', now.getTime()).slice(0, 14)}zzzzzzzzzzzzzzzz`, createdAt: now };
    const { id, at } = postIdAfter(latest, now);
    expect(id > latest.id).toBe(true);
    expect(at).toEqual(new Date(now.getTime() + 1));
  });
});
