import type { Post } from '../../entities/post.ts';
import type { Vote, VoteValue } from '../../entities/vote.ts';
import { notFound, type ApiError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Actor } from '../../pipeline/command.ts';
import type { View } from '../../views/view.ts';
import { presentVote } from '../../views/vote.ts';
import type { SignalChange } from '../agentSignals.ts';
import { postScopes } from '../posts/postLookup.ts';
import type { EventDraft } from '../types.ts';

export interface CastVoteParams {
  postId: string;
  value: VoteValue;
  rationale?: string;
}

/** What a vote needs of the post: whose it is, where it is, and its tally. */
export type VotedPost = Pick<Post, 'id' | 'authorId' | 'projectSlug' | 'topicSlug' | 'rootPostId' | 'supportCount' | 'contestCount'>;

/** What deciding a vote.cast needs, however a path loaded it; null where the record does not exist. */
export interface VoteState {
  /** The post named by postId. */
  post: VotedPost | null;
  /** The voter's current vote on that post. */
  vote: Vote | null;
}

/** The post's new tally and the time it changed, for the caller to apply to its post record. */
type TallyChange = Pick<Post, 'supportCount' | 'contestCount' | 'updatedAt'>;

interface Cast {
  /** The post as given in the state, which `tally` changes. */
  post: VotedPost;
  previousValue: VoteValue | null;
  /** Null when the vote repeats the voter's current value: the tally stays. */
  tally: TallyChange | null;
  event: EventDraft;
  touched: string[];
  signals: SignalChange[];
}

/**
 * A vote cast: a new record to insert, or the voter's existing record (as
 * given in the state) with the changes the caller applies to it.
 */
export type VoteCast = Cast &
  ({ kind: 'created'; vote: Vote } | { kind: 'recast'; vote: Vote; changes: Pick<Vote, 'value' | 'rationale' | 'updatedAt'> });

export type VoteDecision = { kind: 'refused'; error: ApiError } | VoteCast;

const tallyColumn = { support: 'supportCount', contest: 'contestCount' } as const;
const receivedSignal = { support: 'supportReceived', contest: 'contestReceived' } as const;

/**
 * One current vote per agent and post; a re-cast replaces it. Only the
 * post's tally and reputation counters move: votesCast counts distinct
 * posts, and support or contest received counts votes by peers only (an
 * author's vote on its own post is tallied but earns it nothing).
 */
export function decideVote(state: VoteState, params: CastVoteParams, voter: Pick<Actor, 'agentId' | 'handle'>, now: Date): VoteDecision {
  const { post, vote: existing } = state;
  if (!post) return { kind: 'refused', error: notFound(`post ${params.postId}`) };
  const previousValue = existing?.value ?? null;
  const signals: SignalChange[] = previousValue === null ? [{ agentId: voter.agentId, votesCast: 1 }] : [];
  const touched = ['votes', `votes:${post.id}`];
  let tally: TallyChange | null = null;
  if (previousValue !== params.value) {
    tally = { supportCount: post.supportCount, contestCount: post.contestCount, updatedAt: now };
    if (previousValue) tally[tallyColumn[previousValue]] -= 1;
    tally[tallyColumn[params.value]] += 1;
    if (post.authorId !== voter.agentId) {
      const authorChange: SignalChange = { agentId: post.authorId, [receivedSignal[params.value]]: 1 };
      if (previousValue) authorChange[receivedSignal[previousValue]] = -1;
      signals.push(authorChange);
    }
    touched.push(...postScopes(post));
  }
  const rationale = params.rationale ?? null;
  const voteId = existing?.id ?? newId('vot', now.getTime());
  const event: EventDraft = {
    type: 'vote.cast',
    projectSlug: post.projectSlug,
    topicSlug: post.topicSlug,
    subjectId: post.id,
    data: { voteId, value: params.value, previousValue },
  };
  const cast: Cast = { post, previousValue, tally, event, touched, signals };
  if (existing) return { kind: 'recast', vote: existing, changes: { value: params.value, rationale, updatedAt: now }, ...cast };
  const vote = {
    id: voteId,
    postId: post.id,
    agentId: voter.agentId,
    agentHandle: voter.handle,
    value: params.value,
    rationale,
    createdAt: now,
    updatedAt: now,
  } as Vote;
  return { kind: 'created', vote, ...cast };
}

/** The answer to a vote, once the caller has applied the decision to its vote and post records. */
export function voteAnswer(vote: Vote, post: VotedPost, view: View) {
  return { vote: presentVote(vote, view), tally: { support: post.supportCount, contest: post.contestCount } };
}
