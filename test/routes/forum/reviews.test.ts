import { beforeAll, describe, expect, it } from 'vitest';
import { OutboxEvent } from '../../../src/entities/outboxEvent.ts';
import { ReviewCase } from '../../../src/entities/reviewCase.ts';
import { registerAgent, type TestAgent } from '../../support/client.ts';
import { addMember, createPost, createTopic, newTopic, type TestTopic } from '../../support/forum.ts';
import { castVotes, closeReview, openProposal, reviewPost } from '../../support/governance.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();
let topic: TestTopic;
let owner: TestAgent;
let steward: TestAgent;
let author: TestAgent;
let voters: TestAgent[];
beforeAll(async () => {
  topic = await newTopic(t.client, { reviewMode: 'conciliar' });
  owner = topic.owner;
  [steward, author] = [await registerAgent(t.client), await registerAgent(t.client)];
  voters = await Promise.all(Array.from({ length: 6 }, () => registerAgent(t.client)));
  await addMember(t.client, owner, topic.projectSlug, steward);
});

const storedReview = (id: string) => t.orm.em.fork().findOneOrFail(ReviewCase, { id });
const readReview = async (reviewId: string, view = 'compact') =>
  (await t.client.get('/api/forum/reviews', { reviewId, view })).body.reviews[0];
const v = (i: number): TestAgent => voters[i] as TestAgent;

/** An open review whose post got the given ballots (support or contest by voters 0..n). */
async function votedReview(ballots: Parameters<typeof castVotes>[2]) {
  const { post, review } = await reviewPost(t.client, author, topic);
  await castVotes(t.client, post.id, ballots);
  return { post, reviewId: review.reviewId as string };
}

describe('opening review cases', () => {
  it('opens an open review case for a post created with review=true in a conciliar topic, with an event', async () => {
    const { post, review } = await reviewPost(t.client, author, topic);
    expect(review).toMatchObject({
      postId: post.id,
      proposalId: null,
      projectSlug: topic.projectSlug,
      topicSlug: topic.topicSlug,
      status: 'open',
      outcome: null,
      conclusion: null,
      dissentCount: null,
      tally: { support: 0, contest: 0 },
    });
    expect(await storedReview(review.reviewId)).toMatchObject({ postId: post.id, openedByHandle: author.handle, status: 'open' });
    const events = await t.orm.em.fork().find(OutboxEvent, { type: 'review.opened', subjectId: review.reviewId });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      actor: author.handle,
      projectSlug: topic.projectSlug,
      topicSlug: topic.topicSlug,
      data: { postId: post.id, proposalId: null },
    });
    expect(await readReview(review.reviewId)).toMatchObject({ reviewId: review.reviewId, status: 'open' });
  });

  it('opens no review case for a post without review=true', async () => {
    const post = await createPost(t.client, author, topic);
    expect(await t.orm.em.fork().count(ReviewCase, { postId: post.id })).toBe(0);
  });

  it('accepts proposalId only together with review=true and stance=governance (400 otherwise)', async () => {
    const proposal = await openProposal(t.client, author, topic.projectSlug, 'topic.create', { title: 'Needs stance' });
    for (const fields of [
      { review: true, proposalId: proposal.proposalId },
      { stance: 'governance', proposalId: proposal.proposalId },
      { review: true, stance: 'concern', proposalId: proposal.proposalId },
    ]) {
      const reply = await t.client.post(
        '/api/forum/posts',
        { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: 'linking', ...fields },
        { token: author.token },
      );
      expect(reply.status, JSON.stringify(fields)).toBe(400);
      expect(reply.body.error.details).toEqual([
        { field: 'proposalId', issue: 'proposalId is accepted only with review=true and stance=governance' },
      ]);
    }
  });

  it('links an open proposal of the same project once: unknown or foreign is 400, already reviewed or decided is 409', async () => {
    const proposal = await openProposal(t.client, author, topic.projectSlug, 'topic.create', { title: 'Linked once' });
    const { review } = await reviewPost(t.client, author, topic, proposal.proposalId);
    expect(review.proposalId).toBe(proposal.proposalId);
    await expect(reviewPost(t.client, author, topic, proposal.proposalId)).rejects.toThrow(/"conflict"/);

    const other = await newTopic(t.client, { reviewMode: 'conciliar' });
    const foreign = await openProposal(t.client, author, other.projectSlug, 'topic.create', { title: 'Elsewhere' });
    await expect(reviewPost(t.client, author, topic, foreign.proposalId)).rejects.toThrow(/"invalid_request"/);
    await expect(reviewPost(t.client, author, topic, 'prp_00000000000000000000000000')).rejects.toThrow(/"invalid_request"/);

    await castVotes(t.client, (await storedReview(review.reviewId)).postId, [
      [v(0), 'contest'],
      [v(1), 'contest'],
      [v(2), 'contest'],
    ]);
    expect((await closeReview(t.client, owner, review.reviewId)).status).toBe(200);
    await expect(reviewPost(t.client, author, topic, proposal.proposalId)).rejects.toThrow(/"conflict"/);
    expect(await t.orm.em.fork().count(ReviewCase, { proposalId: proposal.proposalId })).toBe(1);
  });
});

describe('closing review cases', () => {
  it('refuses closure by anyone but an owner or steward of the project, the post’s author included (403)', async () => {
    const { reviewId } = await votedReview([
      [v(0), 'support'],
      [v(1), 'support'],
      [v(2), 'support'],
    ]);
    for (const agent of [author, v(0)]) {
      const reply = await closeReview(t.client, agent, reviewId);
      expect(reply.status).toBe(403);
      expect(reply.body.error.code).toBe('forbidden');
    }
    expect((await storedReview(reviewId)).status).toBe('open');
  });

  it('requires a conclusion: missing, blank or overlong is 400 and changes nothing', async () => {
    const { reviewId } = await votedReview([
      [v(0), 'support'],
      [v(1), 'support'],
      [v(2), 'support'],
    ]);
    const missing = await t.client.post('/api/forum/reviews', { action: 'close', reviewId }, { token: owner.token });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details[0].field).toBe('conclusion');
    for (const conclusion of ['', '   ', 'c'.repeat(2001)])
      expect((await closeReview(t.client, owner, reviewId, { conclusion })).status).toBe(400);
    expect((await storedReview(reviewId)).status).toBe('open');
  });

  it('bounds assumptions, evidence and material disagreements to 10 strings of up to 300 characters', async () => {
    const { reviewId } = await votedReview([]);
    const tooMany = Array.from({ length: 11 }, (_, i) => `a${i}`);
    for (const field of ['assumptions', 'evidence', 'materialDisagreements']) {
      for (const value of [tooMany, ['x'.repeat(301)], [''], 'not json', '{"a":1}', [3]]) {
        const reply = await closeReview(t.client, owner, reviewId, { [field]: value });
        expect(reply.status, `${field} ${JSON.stringify(value).slice(0, 20)}`).toBe(400);
        expect(reply.body.error.details[0].field).toMatch(new RegExp(`^${field}`));
      }
    }
    expect((await storedReview(reviewId)).status).toBe('open');
  });

  it('accepts the arrays JSON-encoded in GET with action=close, and records the closer as decision authority', async () => {
    const { reviewId } = await votedReview([
      [v(0), 'support'],
      [v(1), 'support'],
      [v(2), 'support'],
    ]);
    const reply = await t.client.get(
      '/api/forum/reviews',
      {
        action: 'close',
        reviewId,
        conclusion: 'Adopted as written.',
        assumptions: JSON.stringify(['the budget holds']),
        evidence: JSON.stringify(['https://example.org/a', 'post pst_x']),
        materialDisagreements: '["timing"]',
        view: 'full',
      },
      { token: steward.token },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.review).toMatchObject({
      reviewId,
      status: 'closed',
      outcome: 'adopted',
      conclusion: 'Adopted as written.',
      assumptions: ['the budget holds'],
      evidence: ['https://example.org/a', 'post pst_x'],
      materialDisagreements: ['timing'],
      decisionAuthority: { handle: steward.handle, role: 'steward' },
      dissentCount: 0,
      tally: { support: 3, contest: 0 },
    });
    expect(reply.body.proposal).toBeNull();
  });

  it('takes a GET field repeated several times as the array', async () => {
    const { reviewId } = await votedReview([]);
    const query = new URLSearchParams([
      ['action', 'close'],
      ['reviewId', reviewId],
      ['conclusion', 'Repeated.'],
      ['evidence', 'ref-a'],
      ['evidence', 'ref-b'],
    ]);
    const reply = await t.client.send('GET', `/api/forum/reviews?${query}`, undefined, { token: owner.token });
    expect(reply.status).toBe(200);
    expect(reply.body.review.evidence).toEqual(['ref-a', 'ref-b']);
  });

  it('accepts the arrays as JSON arrays in a JSON body and as a JSON-encoded string in form fields', async () => {
    const json = await votedReview([]);
    const viaJson = await closeReview(t.client, owner, json.reviewId, { assumptions: ['one', 'two'] });
    expect(viaJson.body.review.assumptions).toEqual(['one', 'two']);
    const form = await votedReview([]);
    const viaForm = await t.client.post(
      '/api/forum/reviews',
      { action: 'close', reviewId: form.reviewId, conclusion: 'By form.', evidence: '["ref-1"]' },
      { token: owner.token, form: true },
    );
    expect(viaForm.status).toBe(200);
    expect(viaForm.body.review.evidence).toEqual(['ref-1']);
  });

  it('answers 409 already_decided to a second closure and 404 to an unknown review', async () => {
    const { reviewId } = await votedReview([[v(0), 'support']]);
    expect((await closeReview(t.client, owner, reviewId)).status).toBe(200);
    const again = await closeReview(t.client, steward, reviewId, { conclusion: 'Another view.' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('already_decided');
    expect((await storedReview(reviewId)).deciderHandle).toBe(owner.handle);
    expect((await closeReview(t.client, owner, 'rev_00000000000000000000000000')).status).toBe(404);
  });

  it('records review.closed with the outcome and tally', async () => {
    const { post, reviewId } = await votedReview([
      [v(0), 'contest'],
      [v(1), 'contest'],
      [v(2), 'contest'],
    ]);
    await closeReview(t.client, owner, reviewId);
    const events = await t.orm.em.fork().find(OutboxEvent, { type: 'review.closed', subjectId: reviewId });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      actor: owner.handle,
      data: { postId: post.id, proposalId: null, outcome: 'rejected', support: 0, contest: 3, dissentCount: 0 },
    });
  });
});

describe('threshold outcomes', () => {
  const outcomeOf = async (ballots: Parameters<typeof castVotes>[2]) => {
    const { reviewId } = await votedReview(ballots);
    return (await closeReview(t.client, owner, reviewId)).body.review;
  };

  it('adopts with three support votes, and with support at exactly two thirds', async () => {
    expect(
      await outcomeOf([
        [v(0), 'support'],
        [v(1), 'support'],
        [v(2), 'support'],
      ]),
    ).toMatchObject({ outcome: 'adopted', dissentCount: 0 });
    expect(
      await outcomeOf([
        [v(0), 'support'],
        [v(1), 'support'],
        [v(2), 'contest'],
      ]),
    ).toMatchObject({ outcome: 'adopted', dissentCount: 1 });
  });

  it('rejects when contest reaches two thirds, counting the support votes as dissent', async () => {
    expect(
      await outcomeOf([
        [v(0), 'contest'],
        [v(1), 'contest'],
        [v(2), 'contest'],
        [v(3), 'support'],
      ]),
    ).toMatchObject({ outcome: 'rejected', dissentCount: 1, tally: { support: 1, contest: 3 } });
  });

  it('finds no consensus below the quorum of three votes or short of two thirds, the minority being the dissent', async () => {
    expect(
      await outcomeOf([
        [v(0), 'support'],
        [v(1), 'support'],
      ]),
    ).toMatchObject({ outcome: 'no-consensus', dissentCount: 0 });
    expect(
      await outcomeOf([
        [v(0), 'support'],
        [v(1), 'support'],
        [v(2), 'support'],
        [v(3), 'contest'],
        [v(4), 'contest'],
      ]),
    ).toMatchObject({ outcome: 'no-consensus', dissentCount: 2 });
    expect(
      await outcomeOf([
        [v(0), 'support'],
        [v(1), 'support'],
        [v(2), 'contest'],
        [v(3), 'contest'],
      ]),
    ).toMatchObject({ outcome: 'no-consensus', dissentCount: 2 });
  });
});

describe('dissent snapshots', () => {
  it('snapshots every vote with its side, keeping losing votes with empty or no rationale', async () => {
    const { reviewId } = await votedReview([
      [v(0), 'support', 'clear gain'],
      [v(1), 'support'],
      [v(2), 'support'],
      [v(3), 'support'],
      [v(4), 'contest', ''],
      [v(5), 'contest'],
    ]);
    const review = (await closeReview(t.client, owner, reviewId)).body.review;
    expect(review).toMatchObject({ outcome: 'adopted', dissentCount: 2 });
    expect(review.voteSnapshot).toHaveLength(6);
    expect(review.voteSnapshot.filter((s: { losing: boolean }) => s.losing)).toEqual([
      { handle: v(4).handle, value: 'contest', rationale: '', castAt: expect.any(String), losing: true },
      { handle: v(5).handle, value: 'contest', rationale: '', castAt: expect.any(String), losing: true },
    ]);
    expect(review.voteSnapshot[0]).toMatchObject({ handle: v(0).handle, value: 'support', rationale: 'clear gain', losing: false });
  });

  it('keeps the snapshot unchanged after later votes, and the database refuses to change a closed review', async () => {
    const { post, reviewId } = await votedReview([
      [v(0), 'support'],
      [v(1), 'support'],
      [v(2), 'support'],
      [v(3), 'contest', ''],
    ]);
    const closed = (await closeReview(t.client, owner, reviewId)).body.review;
    await castVotes(t.client, post.id, [
      [v(3), 'support', 'changed my mind'],
      [v(0), 'contest'],
      [v(4), 'contest'],
    ]);
    const later = await readReview(reviewId, 'full');
    expect(later.voteSnapshot).toEqual(closed.voteSnapshot);
    expect(later).toMatchObject({ dissentCount: 1, tally: { support: 3, contest: 1 }, outcome: 'adopted' });
    const em = t.orm.em.fork();
    await expect(em.execute(`update review_case set dissent_count = 0 where id = ?`, [reviewId])).rejects.toThrow(
      /closed and cannot change/,
    );
    await expect(em.execute(`delete from review_case where id = ?`, [reviewId])).rejects.toThrow(/closed and cannot change/);
  });
});

describe('reading review cases', () => {
  it('filters by project, topic, status and post, with a live tally while open and the full view on request', async () => {
    const second = await createTopic(t.client, owner, topic.projectSlug, { reviewMode: 'conciliar' });
    const { post, review } = await reviewPost(t.client, author, second);
    await castVotes(t.client, post.id, [
      [v(0), 'support'],
      [v(1), 'contest'],
    ]);
    const byTopic = await t.client.get('/api/forum/reviews', { projectSlug: topic.projectSlug, topicSlug: second.topicSlug });
    expect(byTopic.body.reviews).toHaveLength(1);
    expect(byTopic.body.reviews[0]).toMatchObject({ reviewId: review.reviewId, tally: { support: 1, contest: 1 } });
    expect(byTopic.body.reviews[0].voteSnapshot).toBeUndefined();
    expect((await t.client.get('/api/forum/reviews', { postId: post.id, status: 'closed' })).body.reviews).toEqual([]);
    const full = (await t.client.get('/api/forum/reviews', { postId: post.id, view: 'full' })).body.reviews[0];
    expect(full).toMatchObject({
      openedBy: author.handle,
      decisionAuthority: null,
      voteSnapshot: null,
      materialDisagreements: [],
      closedAt: null,
    });
    const paged = await t.client.get('/api/forum/reviews', { projectSlug: topic.projectSlug, limit: '1' });
    expect(paged.body.reviews).toHaveLength(1);
    const next = await t.client.get('/api/forum/reviews', { projectSlug: topic.projectSlug, limit: '1', cursor: paged.body.nextCursor });
    expect(next.body.reviews[0].reviewId > paged.body.reviews[0].reviewId).toBe(true);
  });

  it('answers 304 until a vote on a review post, and again until the review closes', async () => {
    const { post, review } = await reviewPost(t.client, author, topic);
    const queries: Record<string, string>[] = [{ projectSlug: topic.projectSlug }, { reviewId: review.reviewId }];
    const etagsOf = () => Promise.all(queries.map(async (q) => (await t.client.get('/api/forum/reviews', q)).headers.get('etag') ?? ''));
    const conditional = (etags: string[]) =>
      Promise.all(
        queries.map(async (q, i) => (await t.client.get('/api/forum/reviews', q, { headers: { 'if-none-match': etags[i] ?? '' } })).status),
      );
    let etags = await etagsOf();
    expect(await conditional(etags)).toEqual([304, 304]);
    await castVotes(t.client, post.id, [[v(0), 'support']]);
    expect(await conditional(etags)).toEqual([200, 200]);
    etags = await etagsOf();
    expect(await conditional(etags)).toEqual([304, 304]);
    await closeReview(t.client, owner, review.reviewId);
    expect(await conditional(etags)).toEqual([200, 200]);
  });
});
