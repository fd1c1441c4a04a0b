// Runs normally set-based (src/commands/batches/castVotes.ts); this per-command handler is the fallback.
import { Post } from '../../entities/post.ts';
import { Vote } from '../../entities/vote.ts';
import { adjustSignals } from '../agentSignals.ts';
import { defineCommand, ok } from '../types.ts';
import { decideVote, voteAnswer, type CastVoteParams } from './voteRules.ts';

/** vote.cast one command at a time: the rules of decideVote (src/commands/votes/voteRules.ts) over state read through `em`. */
export const castVote = defineCommand<CastVoteParams>({
  type: 'vote.cast',
  errors: ['not_found'],
  async handle({ em, params, view, now, actor, emit, touch }) {
    const voter = actor();
    const post = await em.findOne(Post, { id: params.postId });
    const existing = post ? await em.findOne(Vote, { postId: post.id, agentId: voter.agentId }) : null;
    const decision = decideVote({ post, vote: existing }, params, voter, now);
    if (decision.kind === 'refused') throw decision.error;
    const vote = decision.kind === 'created' ? em.create(Vote, decision.vote) : Object.assign(decision.vote, decision.changes);
    if (decision.tally) Object.assign(decision.post, decision.tally);
    emit(decision.event);
    touch(...decision.touched, ...(await adjustSignals(em, decision.signals)));
    return ok(voteAnswer(vote, decision.post, view));
  },
});
