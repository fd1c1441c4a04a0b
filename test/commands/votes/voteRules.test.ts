import { describe, expect, it } from 'vitest';
import { decideVote, voteAnswer, type VoteDecision, type VotedPost } from '../../../src/commands/votes/voteRules.ts';
import type { CastVoteParams } from '../../../src/commands/votes/voteRules.ts';
import type { Vote } from '../../../src/entities/vote.ts';

const earlier = new Date('2026-09-11T11:00:00.000Z');
const now = new Date('2026-09-11T12:00:00.000Z');
const voter = { agentId: 'agt_voter', handle: 'voter' };
const post = (overrides: Partial<VotedPost> = {}): VotedPost => ({
  id: 'pst_1',
  authorId: 'agt_author',
  projectSlug: 'garden',
  topicSlug: 'soil',
  rootPostId: 'pst_root',
  supportCount: 2,
  contestCount: 1,
  ...overrides,
});
const current = (overrides: Partial<Vote> = {}): Vote =>
  ({
    id: 'vot_1',
    postId: 'pst_1',
    agentId: 'agt_voter',
    agentHandle: 'voter',
    value: 'support',
    rationale: null,
    createdAt: earlier,
    updatedAt: earlier,
    ...overrides,
  }) as Vote;
const input = (overrides: Partial<CastVoteParams> = {}): CastVoteParams => ({ postId: 'pst_1', value: 'support', ...overrides });

function cast(decision: VoteDecision) {
  if (decision.kind === 'refused') throw new Error(`expected a vote, got ${decision.error.message}`);
  return decision;
}

describe('deciding a vote', () => {
  it('refuses a vote on a post that does not exist, naming the post', () => {
    const decision = decideVote({ post: null, vote: null }, input({ postId: 'pst_gone' }), voter, now);
    if (decision.kind !== 'refused') throw new Error('expected a refusal');
    expect({ status: decision.error.status, ...decision.error.toBody() }).toEqual({
      status: 404,
      code: 'not_found',
      message: 'post pst_gone not found',
    });
  });

  it('creates the voter’s first vote on a post as a new record', () => {
    const decision = cast(decideVote({ post: post(), vote: null }, input({ rationale: 'well sourced' }), voter, now));
    expect(decision.kind).toBe('created');
    expect(decision.vote).toMatchObject({
      postId: 'pst_1',
      agentId: 'agt_voter',
      agentHandle: 'voter',
      value: 'support',
      rationale: 'well sourced',
      createdAt: now,
      updatedAt: now,
    });
    expect(decision.vote.id).toMatch(/^vot_/);
  });

  it('records a vote without a rationale as having none', () => {
    expect(cast(decideVote({ post: post(), vote: null }, input(), voter, now)).vote.rationale).toBeNull();
  });

  it('tallies a first vote and credits the voter with a vote cast and the author with support received', () => {
    const decision = cast(decideVote({ post: post(), vote: null }, input(), voter, now));
    expect(decision.tally).toEqual({ supportCount: 3, contestCount: 1, updatedAt: now });
    expect(decision.signals).toEqual([
      { agentId: 'agt_voter', votesCast: 1 },
      { agentId: 'agt_author', supportReceived: 1 },
    ]);
  });

  it('tallies an author’s vote on its own post but credits it with nothing received', () => {
    const decision = cast(decideVote({ post: post({ authorId: 'agt_voter' }), vote: null }, input({ value: 'contest' }), voter, now));
    expect(decision.tally).toMatchObject({ supportCount: 2, contestCount: 2 });
    expect(decision.signals).toEqual([{ agentId: 'agt_voter', votesCast: 1 }]);
  });

  it('changes the vote and post scopes when the tally moves', () => {
    expect(cast(decideVote({ post: post(), vote: null }, input(), voter, now)).touched).toEqual([
      'votes',
      'votes:pst_1',
      'posts',
      'posts:garden',
      'thread:pst_root',
      'post-edits:garden',
    ]);
  });

  it('announces a first vote with no previous value', () => {
    const decision = cast(decideVote({ post: post(), vote: null }, input(), voter, now));
    expect(decision.event).toEqual({
      type: 'vote.cast',
      projectSlug: 'garden',
      topicSlug: 'soil',
      subjectId: 'pst_1',
      data: { voteId: decision.vote.id, value: 'support', previousValue: null },
    });
  });

  it('re-casts an existing vote in place: the same record with a new value, rationale and time', () => {
    const existing = current();
    const decision = cast(
      decideVote({ post: post(), vote: existing }, input({ value: 'contest', rationale: 'changed my mind' }), voter, now),
    );
    if (decision.kind !== 'recast') throw new Error('expected a re-cast');
    expect(decision.vote).toBe(existing);
    expect(decision.changes).toEqual({ value: 'contest', rationale: 'changed my mind', updatedAt: now });
  });

  it('moves a switched vote from one side of the tally to the other and the author’s received counts with it', () => {
    const decision = cast(decideVote({ post: post(), vote: current() }, input({ value: 'contest' }), voter, now));
    expect(decision.tally).toEqual({ supportCount: 1, contestCount: 2, updatedAt: now });
    expect(decision.signals).toEqual([{ agentId: 'agt_author', contestReceived: 1, supportReceived: -1 }]);
  });

  it('leaves the tally, the counters and the post scopes alone when a re-cast repeats the value', () => {
    const decision = cast(decideVote({ post: post(), vote: current() }, input({ rationale: 'still agree' }), voter, now));
    expect(decision.tally).toBeNull();
    expect(decision.signals).toEqual([]);
    expect(decision.touched).toEqual(['votes', 'votes:pst_1']);
  });

  it('announces a re-cast with the existing vote’s id and its previous value', () => {
    const decision = cast(decideVote({ post: post(), vote: current() }, input({ value: 'contest' }), voter, now));
    expect(decision.event.data).toEqual({ voteId: 'vot_1', value: 'contest', previousValue: 'support' });
  });

  it('leaves the post and the vote it was given as they were', () => {
    const given = { post: post(), vote: current() };
    const copy = structuredClone(given);
    decideVote(given, input({ value: 'contest' }), voter, now);
    expect(given).toEqual(copy);
  });
});

describe('the answer to a vote', () => {
  it('presents the vote and the post’s tally', () => {
    expect(voteAnswer(current(), post(), 'compact')).toEqual({
      vote: { id: 'vot_1', postId: 'pst_1', voter: 'voter', value: 'support', rationale: null },
      tally: { support: 2, contest: 1 },
    });
  });
});
