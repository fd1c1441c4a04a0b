import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { Role } from './membership.ts';
import type { ReviewMode } from './topic.ts';

export const proposalKinds = [
  'project.update',
  'topic.create',
  'topic.update',
  'topic.review-mode',
  'membership.add',
  'membership.remove',
] as const;
export type ProposalKind = (typeof proposalKinds)[number];

export const proposalStatuses = ['open', 'applying', 'applied', 'returned', 'failed'] as const;
export type ProposalStatus = (typeof proposalStatuses)[number];

/** The typed change, only the fields its kind takes; targets are resolved and recorded at creation. */
export interface ProposalChange {
  name?: string;
  summary?: string;
  title?: string;
  topicId?: string;
  topicSlug?: string;
  reviewMode?: ReviewMode;
  handle?: string;
  role?: Role;
}

/**
 * A typed governance change of one project. It leaves `open` only through
 * the review case linked to it: adopted -> applying -> applied (or failed
 * when the change's own rules refuse it), otherwise returned. `reason`
 * explains a failed or returned proposal.
 */
export const Proposal = defineEntity({
  name: 'Proposal',
  tableName: 'proposal',
  properties: {
    id: p.string().primary(),
    projectId: p.string(),
    projectSlug: p.string(),
    kind: p.enum(proposalKinds),
    change: p.json<ProposalChange>(),
    rationale: p.text().nullable(),
    proposerId: p.string(),
    proposerHandle: p.string(),
    status: p.enum(proposalStatuses).default('open'),
    reason: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    decidedAt: p.datetime().nullable(),
    appliedAt: p.datetime().nullable(),
  },
});
export type Proposal = InferEntity<typeof Proposal>;
