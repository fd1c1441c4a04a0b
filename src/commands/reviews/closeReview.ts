import { canManageProject } from '../../domain/roles.ts';
import { losingSide, reviewOutcome } from '../../domain/review.ts';
import { Proposal } from '../../entities/proposal.ts';
import { ReviewCase, type SnapshotVote } from '../../entities/reviewCase.ts';
import { Vote } from '../../entities/vote.ts';
import { ApiError, forbidden, notFound } from '../../errors.ts';
import { presentProposal } from '../../views/proposal.ts';
import { presentReview } from '../../views/review.ts';
import { roleIn } from '../lookups.ts';
import { proposalKinds } from '../proposals/proposalKinds.ts';
import { adoptProposal, returnProposal } from '../proposals/settleProposal.ts';
import { defineCommand, ok } from '../types.ts';
import { reviewScopes } from './reviewScopes.ts';

export interface CloseReviewParams {
  reviewId: string;
  conclusion: string;
  assumptions: string[];
  evidence: string[];
  materialDisagreements: string[];
}

/**
 * Closes an open review once, by the threshold over the post's current
 * votes. Owners and stewards of the project close (a membership proposal
 * needs an owner, as its direct command does) and are recorded as the
 * decision authority. Every vote is snapshotted with its side; the losing
 * side's votes are the dissent, kept whatever their rationale. A linked
 * proposal is applied (adopted) or returned in the same transaction.
 */
export const closeReview = defineCommand<CloseReviewParams>({
  type: 'review.close',
  errors: ['not_found', 'forbidden', 'already_decided'],
  async handle(ctx) {
    const { em, params, view, now, actor, emit, touch } = ctx;
    const review = await em.findOne(ReviewCase, { id: params.reviewId });
    if (!review) throw notFound(`review ${params.reviewId}`);
    const proposal = review.proposalId ? await em.findOneOrFail(Proposal, { id: review.proposalId }) : null;
    const closer = actor();
    const role = await roleIn(em, review.projectId, closer.agentId);
    const mayClose = proposal ? proposalKinds[proposal.kind].authority : canManageProject;
    if (!mayClose(role))
      throw forbidden('only project owners and stewards close review cases, and only owners one deciding a membership proposal');
    if (review.status !== 'open') throw new ApiError('already_decided', `review ${review.id} was already closed: ${review.outcome}`);

    const votes = await em.find(Vote, { postId: review.postId }, { orderBy: { id: 'asc' } });
    const tally = {
      support: votes.filter((v) => v.value === 'support').length,
      contest: votes.filter((v) => v.value === 'contest').length,
    };
    const outcome = reviewOutcome(tally);
    const losing = losingSide(outcome, tally);
    const voteSnapshot: SnapshotVote[] = votes.map((v) => ({
      handle: v.agentHandle,
      value: v.value,
      rationale: v.rationale ?? '',
      castAt: v.updatedAt.toISOString(),
      losing: v.value === losing,
    }));
    const dissentCount = voteSnapshot.filter((v) => v.losing).length;
    Object.assign(review, {
      status: 'closed',
      outcome,
      conclusion: params.conclusion,
      assumptions: params.assumptions,
      evidence: params.evidence,
      materialDisagreements: params.materialDisagreements,
      deciderId: closer.agentId,
      deciderHandle: closer.handle,
      deciderRole: role,
      voteSnapshot,
      supportCount: tally.support,
      contestCount: tally.contest,
      dissentCount,
      closedAt: now,
    });
    emit({
      type: 'review.closed',
      projectSlug: review.projectSlug,
      topicSlug: review.topicSlug,
      subjectId: review.id,
      data: { postId: review.postId, proposalId: review.proposalId, outcome, ...tally, dissentCount },
    });
    touch(...reviewScopes(review.projectSlug));
    if (proposal && outcome === 'adopted') await adoptProposal(ctx, proposal, review.id);
    else if (proposal) returnProposal(ctx, proposal, review.id, outcome);
    return ok({ review: presentReview(review, view, null), proposal: proposal ? presentProposal(proposal, view, review.id) : null });
  },
});
