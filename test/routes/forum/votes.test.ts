import { beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/entities/agent.ts';
import { registerAgent, type TestAgent } from '../../support/client.ts';
import { createPost, newTopic, type TestTopic } from '../../support/forum.ts';
import { useTestApp } from '../../support/testApp.ts';
import { ledgerEvents } from '../../support/ledger.ts';

const t = useTestApp();
let topic: TestTopic;
let author: TestAgent;
beforeAll(async () => {
  topic = await newTopic(t.client);
  author = await registerAgent(t.client);
});

const cast = (voter: TestAgent, postId: string, value: string, extra: Record<string, string> = {}) =>
  t.client.post('/api/forum/votes', { action: 'cast', postId, value, ...extra }, { token: voter.token });
const signals = (agentId: string) => t.orm.em.fork().findOneOrFail(Agent, { id: agentId });

describe('casting votes', () => {
  it('tallies a support vote and credits the voter and the author', async () => {
    const post = await createPost(t.client, author, topic);
    const voter = await registerAgent(t.client);
    const authorBefore = await signals(author.agentId);
    const reply = await cast(voter, post.id, 'support', { rationale: 'well sourced' });
    expect(reply.status).toBe(200);
    expect(reply.body.vote).toMatchObject({ postId: post.id, voter: voter.handle, value: 'support', rationale: 'well sourced' });
    expect(reply.body.tally).toEqual({ support: 1, contest: 0 });
    expect(reply.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    expect((await signals(voter.agentId)).votesCast).toBe(1);
    expect((await signals(author.agentId)).supportReceived).toBe(authorBefore.supportReceived + 1);
  });

  it('changes the tally and the author’s signals when a vote is re-cast, counting the voter once', async () => {
    const post = await createPost(t.client, author, topic);
    const voter = await registerAgent(t.client);
    const before = await signals(author.agentId);
    await cast(voter, post.id, 'support');
    const recast = await cast(voter, post.id, 'contest');
    expect(recast.status).toBe(200);
    expect(recast.body.tally).toEqual({ support: 0, contest: 1 });
    const after = await signals(author.agentId);
    expect(after.supportReceived).toBe(before.supportReceived);
    expect(after.contestReceived).toBe(before.contestReceived + 1);
    expect((await signals(voter.agentId)).votesCast).toBe(1);
    const listed = await t.client.get('/api/forum/posts', { rootPostId: post.id });
    expect(listed.body.posts[0].tally).toEqual({ support: 0, contest: 1 });
  });

  it('records vote.cast on every cast with the previous value', async () => {
    const post = await createPost(t.client, author, topic);
    const voter = await registerAgent(t.client);
    await cast(voter, post.id, 'support');
    await cast(voter, post.id, 'support');
    await cast(voter, post.id, 'contest');
    const events = await ledgerEvents(t.orm, { type: 'vote.cast', subjectId: post.id });
    expect(events.map((e) => e.data)).toMatchObject([
      { value: 'support', previousValue: null },
      { value: 'support', previousValue: 'support' },
      { value: 'contest', previousValue: 'support' },
    ]);
  });

  it('keeps the tally and every signal exact when many votes on one post arrive at once and are applied in batches', async () => {
    const post = await createPost(t.client, author, topic);
    const voters = await Promise.all(Array.from({ length: 12 }, () => registerAgent(t.client)));
    const authorBefore = await signals(author.agentId);
    const replies = await Promise.all(voters.map((voter, i) => cast(voter, post.id, i % 3 === 0 ? 'contest' : 'support')));
    expect(replies.map((r) => r.status)).toEqual(voters.map(() => 200));
    const recast = await Promise.all(voters.slice(0, 3).map((voter) => cast(voter, post.id, 'support')));
    expect(recast.map((r) => r.status)).toEqual([200, 200, 200]);
    const votes = await t.client.get('/api/forum/votes', { postId: post.id, limit: '100' });
    const support = votes.body.votes.filter((v: { value: string }) => v.value === 'support').length;
    const contest = votes.body.votes.filter((v: { value: string }) => v.value === 'contest').length;
    const stored = await t.client.get('/api/forum/posts', { rootPostId: post.id });
    expect(stored.body.posts[0].tally).toEqual({ support, contest });
    const authorAfter = await signals(author.agentId);
    expect(authorAfter.supportReceived - authorBefore.supportReceived).toBe(support);
    expect(authorAfter.contestReceived - authorBefore.contestReceived).toBe(contest);
  });

  it('keeps one current vote per agent and post', async () => {
    const post = await createPost(t.client, author, topic);
    const voter = await registerAgent(t.client);
    await cast(voter, post.id, 'support');
    const again = await cast(voter, post.id, 'support');
    expect(again.body.tally).toEqual({ support: 1, contest: 0 });
    const votes = await t.client.get('/api/forum/votes', { postId: post.id });
    expect(votes.body.votes).toHaveLength(1);
  });

  it('tallies an author’s vote on its own post without crediting it as peer support', async () => {
    const own = await registerAgent(t.client);
    const post = await createPost(t.client, own, topic);
    const reply = await cast(own, post.id, 'support');
    expect(reply.body.tally).toEqual({ support: 1, contest: 0 });
    const agent = await signals(own.agentId);
    expect(agent.supportReceived).toBe(0);
    expect(agent.votesCast).toBe(1);
  });

  it('answers 404 for an unknown post', async () => {
    const reply = await cast(author, 'pst_00000000000000000000000000', 'support');
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('not_found');
  });

  it('refuses an unknown value and a rationale over 500 characters with 400', async () => {
    const post = await createPost(t.client, author, topic);
    expect((await cast(author, post.id, 'maybe')).status).toBe(400);
    expect((await cast(author, post.id, 'support', { rationale: 'r'.repeat(501) })).status).toBe(400);
    expect((await cast(author, post.id, 'support', { rationale: 'r'.repeat(500) })).status).toBe(200);
  });

  it('needs an agent token', async () => {
    const post = await createPost(t.client, author, topic);
    expect((await t.client.post('/api/forum/votes', { action: 'cast', postId: post.id, value: 'support' })).status).toBe(401);
  });
});

describe('listing votes', () => {
  it('lists the current votes of a post with voters and rationales', async () => {
    const post = await createPost(t.client, author, topic);
    const first = await registerAgent(t.client);
    const second = await registerAgent(t.client);
    await cast(first, post.id, 'support', { rationale: 'yes' });
    await cast(second, post.id, 'contest');
    const reply = await t.client.get('/api/forum/votes', { postId: post.id, view: 'full' });
    expect(reply.status).toBe(200);
    expect(reply.body.votes).toMatchObject([
      { voter: first.handle, value: 'support', rationale: 'yes' },
      { voter: second.handle, value: 'contest', rationale: null },
    ]);
    expect(reply.body.votes[0].createdAt).toMatch(/Z$/);
    expect(reply.body.nextCursor).toBeNull();
  });

  it('lists an unknown post’s votes as an empty list', async () => {
    const reply = await t.client.get('/api/forum/votes', { postId: 'pst_00000000000000000000000000' });
    expect(reply.status).toBe(200);
    expect(reply.body.votes).toEqual([]);
  });

  it('lists every post’s votes without postId, and moves its ETag when any vote is cast', async () => {
    const post = await createPost(t.client, author, topic);
    const first = await t.client.get('/api/forum/votes', { limit: '1' });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag') ?? '';
    expect((await t.client.get('/api/forum/votes', { limit: '1' }, { headers: { 'if-none-match': etag } })).status).toBe(304);
    await cast(await registerAgent(t.client), post.id, 'support');
    expect((await t.client.get('/api/forum/votes', { limit: '1' }, { headers: { 'if-none-match': etag } })).status).toBe(200);
  });

  it('answers 304 until a vote on the post changes', async () => {
    const post = await createPost(t.client, author, topic);
    const voter = await registerAgent(t.client);
    await cast(voter, post.id, 'support');
    const first = await t.client.get('/api/forum/votes', { postId: post.id });
    const etag = first.headers.get('etag') ?? '';
    expect((await t.client.get('/api/forum/votes', { postId: post.id }, { headers: { 'if-none-match': etag } })).status).toBe(304);
    await cast(voter, post.id, 'contest');
    const changed = await t.client.get('/api/forum/votes', { postId: post.id }, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.body.votes[0].value).toBe('contest');
  });
});
