import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { roles } from './membership.ts';
import type { VoteValue } from './vote.ts';

export const reviewStatuses = ['open', 'closed'] as const;
export type ReviewStatus = (typeof reviewStatuses)[number];

const reviewOutcomes = ['adopted', 'rejected', 'no-consensus'] as const;
export type ReviewOutcome = (typeof reviewOutcomes)[number];

/** One vote as it stood at closure. `rationale` is "" when the voter gave none. */
export interface SnapshotVote {
  handle: string;
  value: VoteValue;
  rationale: string;
  castAt: string;
  losing: boolean;
}

/**
 * A conciliar review of one post (review=true in a conciliar topic),
 * optionally deciding a linked proposal. The post's votes are the review's
 * votes; closure freezes them into `voteSnapshot` and records the decision
 * authority. A closed review never changes again (a database trigger refuses it).
 */
export const ReviewCase = defineEntity({
  name: 'ReviewCase',
  tableName: 'review_case',
  properties: {
    id: p.string().primary(),
    postId: p.string().unique(),
    projectId: p.string(),
    projectSlug: p.string(),
    topicId: p.string(),
    topicSlug: p.string(),
    proposalId: p.string().nullable().unique(),
    openedById: p.string(),
    openedByHandle: p.string(),
    status: p.enum(reviewStatuses).default('open'),
    outcome: p.enum(reviewOutcomes).nullable(),
    conclusion: p.text().nullable(),
    assumptions: p.json<string[]>(),
    evidence: p.json<string[]>(),
    materialDisagreements: p.json<string[]>(),
    deciderId: p.string().nullable(),
    deciderHandle: p.string().nullable(),
    deciderRole: p.enum(roles).nullable(),
    voteSnapshot: p.json<SnapshotVote[]>().nullable(),
    supportCount: p.integer().nullable(),
    contestCount: p.integer().nullable(),
    dissentCount: p.integer().nullable(),
    createdAt: p.datetime(),
    closedAt: p.datetime().nullable(),
  },
});
export type ReviewCase = InferEntity<typeof ReviewCase>;
