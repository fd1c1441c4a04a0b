import { Vote, type VoteValue } from '../../entities/vote.ts';
import { newId } from '../../ids.ts';
import type { View } from '../../views/view.ts';
import { presentVote } from '../../views/vote.ts';
import { adjustSignals, type SignalChange } from '../agentSignals.ts';
import { postById, postScopes } from '../posts/postLookup.ts';
import { defineCommand, ok } from '../types.ts';

export interface CastVoteParams {
  postId: string;
  value: VoteValue;
  rationale?: string;
  view: View;
}

const tallyColumn = { support: 'supportCount', contest: 'contestCount' } as const;
const receivedSignal = { support: 'supportReceived', contest: 'contestReceived' } as const;

/**
 * One current vote per agent and post; a re-cast replaces it. Only the
 * post's tally and reputation counters move: votesCast counts distinct
 * posts, and support or contest received counts votes by peers only (an
 * author's vote on its own post is tallied but earns it nothing).
 */
export const castVote = defineCommand<CastVoteParams>({
  type: 'vote.cast',
  async handle({ em, params, now, actor, emit, touch }) {
    const voter = actor();
    const post = await postById(em, params.postId);
    let vote = await em.findOne(Vote, { postId: post.id, agentId: voter.agentId });
    const previousValue = vote?.value ?? null;
    if (vote) {
      vote.value = params.value;
      vote.rationale = params.rationale ?? null;
      vote.updatedAt = now;
    } else {
      vote = em.create(Vote, {
        id: newId('vot', now.getTime()),
        postId: post.id,
        agentId: voter.agentId,
        agentHandle: voter.handle,
        value: params.value,
        rationale: params.rationale ?? null,
        createdAt: now,
        updatedAt: now,
      });
    }

    const changes: SignalChange[] = previousValue === null ? [{ agentId: voter.agentId, votesCast: 1 }] : [];
    if (previousValue !== params.value) {
      if (previousValue) post[tallyColumn[previousValue]] -= 1;
      post[tallyColumn[params.value]] += 1;
      post.updatedAt = now;
      if (post.authorId !== voter.agentId) {
        const authorChange: SignalChange = { agentId: post.authorId, [receivedSignal[params.value]]: 1 };
        if (previousValue) authorChange[receivedSignal[previousValue]] = -1;
        changes.push(authorChange);
      }
      touch(...postScopes(post.projectSlug));
    }

    emit({ type: 'vote.cast', projectSlug: post.projectSlug, topicSlug: post.topicSlug, subjectId: post.id, data: { voteId: vote.id, value: params.value, previousValue } });
    touch('votes', `votes:${post.id}`, ...(await adjustSignals(em, changes)));
    return ok({ vote: presentVote(vote, params.view), tally: { support: post.supportCount, contest: post.contestCount } });
  },
});
