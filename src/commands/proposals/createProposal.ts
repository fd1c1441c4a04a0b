import { Project } from '../../entities/project.ts';
import { Proposal, type ProposalChange, type ProposalKind } from '../../entities/proposal.ts';
import { ApiError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { presentProposal } from '../../views/proposal.ts';
import { defineCommand, ok } from '../types.ts';
import { proposalKinds } from './proposalKinds.ts';
import { proposalScopes } from './proposalScopes.ts';

export interface CreateProposalParams extends ProposalChange {
  projectSlug: string;
  kind: ProposalKind;
  rationale?: string;
}

/**
 * Any authenticated agent proposes; no role is needed, because nothing
 * changes until a review adopts the proposal. Creation checks only that the
 * targets exist; the change's own rules are checked when it is applied.
 */
export const createProposal = defineCommand<CreateProposalParams>({
  type: 'proposal.create',
  errors: ['invalid_request'],
  async handle({ em, params, view, now, actor, emit, touch }) {
    const { projectSlug, kind, rationale, ...given } = params;
    const project = await em.findOne(Project, { slug: projectSlug });
    if (!project)
      throw new ApiError('invalid_request', `projectSlug ${projectSlug} is not a project`, [
        { field: 'projectSlug', issue: 'is not a project' },
      ]);
    const change = await proposalKinds[kind].resolve(em, project, given);
    const proposer = actor();
    const proposal = em.create(Proposal, {
      id: newId('prp', now.getTime()),
      projectId: project.id,
      projectSlug: project.slug,
      kind,
      change,
      rationale: rationale ?? null,
      proposerId: proposer.agentId,
      proposerHandle: proposer.handle,
      status: 'open',
      reason: null,
      createdAt: now,
      updatedAt: now,
      decidedAt: null,
      appliedAt: null,
    });
    // An existing topic is the event's topic; a proposed one does not exist yet.
    emit({
      type: 'proposal.created',
      projectSlug: project.slug,
      topicSlug: change.topicId ? change.topicSlug : null,
      subjectId: proposal.id,
      data: { kind, ...change },
    });
    touch(...proposalScopes(project.slug));
    return ok({ proposal: presentProposal(proposal, view, null) });
  },
});
