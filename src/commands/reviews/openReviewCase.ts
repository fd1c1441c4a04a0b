import type { EntityManager } from '@mikro-orm/postgresql';
import type { Post } from '../../entities/post.ts';
import { Proposal } from '../../entities/proposal.ts';
import { ReviewCase } from '../../entities/reviewCase.ts';
import { ApiError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { proposalScopes } from '../proposals/proposalScopes.ts';
import type { CommandEffects } from '../types.ts';
import { reviewScopes } from './reviewScopes.ts';

/** The proposal a review post may decide: open, of the post's project, and not under another review. */
async function linkableProposal(em: EntityManager, post: Post, proposalId: string): Promise<Proposal> {
  const proposal = await em.findOne(Proposal, { id: proposalId });
  if (!proposal || proposal.projectId !== post.projectId) {
    throw new ApiError('invalid_request', `proposalId ${proposalId} is not a proposal of ${post.projectSlug}`, [
      { field: 'proposalId', issue: 'is not a proposal of this project' },
    ]);
  }
  if (proposal.status !== 'open')
    throw new ApiError('conflict', `proposal ${proposal.id} is ${proposal.status}; only an open proposal can be reviewed`);
  const linked = await em.findOne(ReviewCase, { proposalId: proposal.id });
  if (linked) throw new ApiError('conflict', `proposal ${proposal.id} is already under review ${linked.id}`);
  return proposal;
}

/**
 * Opens the review case of a post created with review=true (in a conciliar
 * topic), in the post's own transaction; the post's votes are the review's.
 * With proposalId the review decides that proposal.
 */
export async function openReviewCase({ em, emit, touch }: CommandEffects, post: Post, proposalId?: string): Promise<ReviewCase> {
  const proposal = proposalId ? await linkableProposal(em, post, proposalId) : null;
  const review = em.create(ReviewCase, {
    id: newId('rev', post.createdAt.getTime()),
    postId: post.id,
    projectId: post.projectId,
    projectSlug: post.projectSlug,
    topicId: post.topicId,
    topicSlug: post.topicSlug,
    proposalId: proposal?.id ?? null,
    openedById: post.authorId,
    openedByHandle: post.authorHandle,
    status: 'open',
    outcome: null,
    conclusion: null,
    assumptions: [],
    evidence: [],
    materialDisagreements: [],
    deciderId: null,
    deciderHandle: null,
    deciderRole: null,
    voteSnapshot: null,
    supportCount: null,
    contestCount: null,
    dissentCount: null,
    createdAt: post.createdAt,
    closedAt: null,
  });
  emit({
    type: 'review.opened',
    projectSlug: post.projectSlug,
    topicSlug: post.topicSlug,
    subjectId: review.id,
    data: { postId: post.id, proposalId: review.proposalId },
  });
  touch(...reviewScopes(post.projectSlug), ...(proposal ? proposalScopes(post.projectSlug) : []));
  return review;
}
