import type { Tally } from '../domain/review.ts';
import type { ReviewCase } from '../entities/reviewCase.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import Joi from 'joi';
import { reviewStatuses } from '../entities/reviewCase.ts';
import { integer, links, named, nullableText, nullableTimestamp, oneOf, record, tally, text } from './schema.ts';

/**
 * A review case. `tally` is live from the post's votes while the review is
 * open and frozen at closure; the full view adds who decided, the immutable
 * vote snapshot and the material disagreements.
 */
export function presentReview(review: ReviewCase, view: View, liveTally: Tally | null) {
  const closed = review.status === 'closed';
  return withFull(
    view,
    {
      reviewId: review.id,
      postId: review.postId,
      proposalId: review.proposalId ?? null,
      projectSlug: review.projectSlug,
      topicSlug: review.topicSlug,
      status: review.status,
      outcome: review.outcome ?? null,
      tally: closed ? { support: review.supportCount ?? 0, contest: review.contestCount ?? 0 } : liveTally,
      conclusion: review.conclusion ?? null,
      assumptions: review.assumptions,
      evidence: review.evidence,
      dissentCount: review.dissentCount ?? null,
    },
    () => ({
      openedBy: review.openedByHandle,
      decisionAuthority: closed ? { handle: review.deciderHandle, role: review.deciderRole } : null,
      voteSnapshot: review.voteSnapshot ?? null,
      materialDisagreements: review.materialDisagreements,
      createdAt: iso(review.createdAt),
      closedAt: iso(review.closedAt),
      links: {
        self: `${forumBase}/reviews?reviewId=${review.id}`,
        votes: `${forumBase}/votes?postId=${review.postId}`,
        proposal: review.proposalId ? `${forumBase}/proposals?proposalId=${review.proposalId}` : null,
      },
    }),
  );
}

export const reviewRecord = named(
  'Review',
  record(
    {
      reviewId: text(),
      postId: text(),
      proposalId: nullableText(),
      projectSlug: text(),
      topicSlug: text(),
      status: oneOf(reviewStatuses),
      outcome: nullableText(),
      tally: tally().allow(null),
      conclusion: nullableText(),
      assumptions: Joi.array().items(text()),
      evidence: Joi.array().items(text()),
      dissentCount: integer().allow(null),
    },
    {
      openedBy: text(),
      decisionAuthority: Joi.object({ handle: nullableText(), role: nullableText() }).allow(null),
      voteSnapshot: Joi.any(),
      materialDisagreements: Joi.array().items(text()),
      createdAt: nullableTimestamp(),
      closedAt: nullableTimestamp(),
      links: links(),
    },
  ),
);
