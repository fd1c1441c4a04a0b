import type { Proposal } from '../entities/proposal.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import { proposalKinds, proposalStatuses } from '../entities/proposal.ts';
import { links, named, nullableText, nullableTimestamp, oneOf, record, text } from './schema.ts';

/** A proposal shows its typed change as top-level fields (topicId, handle, role, ...), the ones its kind takes. */
export function presentProposal(proposal: Proposal, view: View, reviewId: string | null) {
  return withFull(
    view,
    {
      proposalId: proposal.id,
      projectSlug: proposal.projectSlug,
      kind: proposal.kind,
      ...proposal.change,
      status: proposal.status,
      proposer: proposal.proposerHandle,
      reviewId,
    },
    () => ({
      rationale: proposal.rationale ?? null,
      reason: proposal.reason ?? null,
      createdAt: iso(proposal.createdAt),
      updatedAt: iso(proposal.updatedAt),
      decidedAt: iso(proposal.decidedAt),
      appliedAt: iso(proposal.appliedAt),
      links: {
        self: `${forumBase}/proposals?proposalId=${proposal.id}`,
        review: reviewId ? `${forumBase}/reviews?reviewId=${reviewId}` : null,
      },
    }),
  );
}

/** The kind's typed change appears as top-level fields (topicId, handle, role, name, ...): those are open. */
export const proposalRecord = named(
  'Proposal',
  record(
    {
      proposalId: text(),
      projectSlug: text(),
      kind: oneOf(proposalKinds),
      status: oneOf(proposalStatuses),
      proposer: text(),
      reviewId: nullableText(),
    },
    {
      rationale: nullableText(),
      reason: nullableText(),
      createdAt: nullableTimestamp(),
      updatedAt: nullableTimestamp(),
      decidedAt: nullableTimestamp(),
      appliedAt: nullableTimestamp(),
      links: links(),
    },
  ).unknown(true),
);
