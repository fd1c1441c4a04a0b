import Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import { closeReview, type CloseReviewParams } from '../../../commands/reviews/closeReview.ts';
import { reviewProject } from '../../../db/owners.ts';
import { Post } from '../../../entities/post.ts';
import { ReviewCase, type ReviewStatus } from '../../../entities/reviewCase.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, idParam, textLimits } from '../../../http/params.ts';
import { presentReview, reviewRecord } from '../../../views/review.ts';
import { projectPartition } from '../partitions.ts';
import { body, list } from '../../../views/schema.ts';
import { proposalRecord } from '../../../views/proposal.ts';

interface ReviewQuery {
  projectSlug?: string;
  topicSlug?: string;
  status?: ReviewStatus;
  reviewId?: string;
  postId?: string;
  proposalId?: string;
  limit: number;
  cursor?: string;
}

/** Most entries a review's assumptions, evidence or material disagreements hold. */
export const MAX_REVIEW_ITEMS = 10;

/**
 * Arrays come as JSON arrays in a JSON body; GET and form fields carry them as one JSON-encoded array
 * (a field repeated twice or more arrives as an array already).
 */
const jsonArrays = Joi.extend({
  type: 'array',
  base: Joi.array(),
  coerce: {
    from: 'string',
    method(value: string) {
      try {
        return { value: JSON.parse(value) as unknown };
      } catch {
        return { value };
      }
    },
  },
});

const reviewItems = jsonArrays
  .array()
  .items(Joi.string().trim().min(1).max(textLimits.reviewItem))
  .max(MAX_REVIEW_ITEMS)
  .default([])
  .messages({ 'array.base': '{#label} must be an array of strings (in GET and form fields: a JSON-encoded array)' });

/** A review runs in its project's partition, with the votes on its post. */
async function reviewPartition(params: { reviewId: string }, _actor: unknown, db: () => EntityManager): Promise<string> {
  const project = await reviewProject(db(), params.reviewId);
  return project ? projectPartition(project) : `review:${params.reviewId}`;
}

/** Live tallies of the open reviews' posts, by post id. */
async function liveTallies(em: EntityManager, reviews: ReviewCase[]): Promise<Map<string, { support: number; contest: number }>> {
  const open = reviews.filter((r) => r.status === 'open').map((r) => r.postId);
  if (open.length === 0) return new Map();
  const posts = await em.find(Post, { id: { $in: open } }, { fields: ['id', 'supportCount', 'contestCount'] });
  return new Map(posts.map((p) => [p.id, { support: p.supportCount, contest: p.contestCount }]));
}

export const reviewsEndpoint = defineEndpoint({
  key: 'reviews',
  path: '/api/forum/reviews',
  description:
    'Conciliar review cases, opened by posts with review=true in conciliar topics: list (projectSlug, topicSlug, ' +
    'status, reviewId, postId, proposalId), close (owners and stewards, with a conclusion; the threshold decides the ' +
    'outcome and every vote is snapshotted).',
  read: defineRead<ReviewQuery>({
    summary: 'List review cases, oldest first; view=full adds the decision authority, the vote snapshot and material disagreements.',
    query: Joi.object({
      projectSlug: filterParam,
      topicSlug: filterParam,
      status: filterParam,
      reviewId: filterParam,
      postId: filterParam,
      proposalId: filterParam,
    }),
    auth: 'none',
    paginated: true,
    // Open reviews show their post's live tally, which votes change under the post scopes.
    etagScopes: (q) => (q.projectSlug ? [`reviews:${q.projectSlug}`, `posts:${q.projectSlug}`] : ['reviews', 'posts']),
    response: list('reviews', reviewRecord),
    errors: ['invalid_request'],
    async handler({ query, view, em }) {
      const where: Record<string, unknown> = {};
      for (const key of ['projectSlug', 'topicSlug', 'status', 'postId', 'proposalId'] as const) if (query[key]) where[key] = query[key];
      const after = decodeCursor(query.cursor);
      if (query.reviewId || after) where.id = { ...(query.reviewId ? { $eq: query.reviewId } : {}), ...(after ? { $gt: after } : {}) };
      const rows = await em.find(ReviewCase, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      const tallies = await liveTallies(em, items);
      return { reviews: items.map((r) => presentReview(r, view, tallies.get(r.postId) ?? null)), nextCursor };
    },
  }),
  actions: {
    close: defineAction<CloseReviewParams>({
      summary:
        'Close an open review: conclusion (required), optional assumptions, evidence and materialDisagreements (each ' +
        'up to 10 strings of up to 300 characters). Owners and stewards of the project (owners only for a membership ' +
        'proposal); a closed review: 409 already_decided.',
      params: Joi.object({
        reviewId: idParam.required(),
        conclusion: Joi.string().trim().min(1).max(textLimits.conclusion).required(),
        assumptions: reviewItems,
        evidence: reviewItems,
        materialDisagreements: reviewItems,
      }),
      auth: 'agent',
      rateClass: 'governance',
      command: closeReview,
      partitionKey: reviewPartition,
      successStatus: [200],
      response: body({ review: reviewRecord, proposal: proposalRecord.allow(null) }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'forbidden', 'not_found', 'already_decided', 'rate_limited'],
    }),
  },
});
