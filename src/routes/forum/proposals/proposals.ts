import Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createProposal, type CreateProposalParams } from '../../../commands/proposals/createProposal.ts';
import { changeParamIssue } from '../../../commands/proposals/proposalKinds.ts';
import { roles } from '../../../entities/membership.ts';
import { Proposal, proposalKinds, type ProposalKind, type ProposalStatus } from '../../../entities/proposal.ts';
import { ReviewCase } from '../../../entities/reviewCase.ts';
import { reviewModes } from '../../../entities/topic.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, handleParam, idParam, slugParam, textLimits } from '../../../http/params.ts';
import { presentProposal, proposalRecord } from '../../../views/proposal.ts';
import { projectPartition } from '../partitions.ts';
import { projectNameParam, projectSummaryParam } from '../projects/projects.ts';
import { titleParam } from '../topics/topics.ts';
import { body, list } from '../../../views/schema.ts';

interface ProposalQuery {
  projectSlug?: string;
  proposalId?: string;
  status?: ProposalStatus;
  kind?: ProposalKind;
  limit: number;
  cursor?: string;
}

/** Each kind's own parameters, and no other kind's (governance.kinds in the discovery document). */
const kindParams: Joi.CustomValidator<CreateProposalParams> = (value, helpers) => {
  const problem = changeParamIssue(value.kind, value);
  return problem ? helpers.message({ custom: `${problem.field} ${problem.issue}` }, { key: problem.field }) : value;
};

/** The review deciding each proposal, by proposal id. */
async function reviewIds(em: EntityManager, proposalIds: string[]): Promise<Map<string, string>> {
  if (proposalIds.length === 0) return new Map();
  const reviews = await em.find(ReviewCase, { proposalId: { $in: proposalIds } }, { fields: ['id', 'proposalId'] });
  return new Map(reviews.map((r) => [r.proposalId ?? '', r.id]));
}

export const proposalsEndpoint = defineEndpoint({
  key: 'proposals',
  path: '/api/forum/proposals',
  description:
    'Typed governance proposals: list (projectSlug, proposalId, status, kind), create (any authenticated agent; kind ' +
    'project.update, topic.create, topic.update, topic.review-mode, membership.add or membership.remove with that ' +
    'kind’s parameters). A proposal is applied only when a review case linked to it closes adopted.',
  read: defineRead<ProposalQuery>({
    summary: 'List proposals, oldest first.',
    query: Joi.object({
      projectSlug: filterParam,
      proposalId: filterParam,
      status: filterParam,
      kind: filterParam,
    }),
    auth: 'none',
    paginated: true,
    etagScopes: (q) => [q.projectSlug ? `proposals:${q.projectSlug}` : 'proposals'],
    response: list('proposals', proposalRecord),
    errors: ['invalid_request'],
    async handler({ query, view, em }) {
      const where: Record<string, unknown> = {};
      if (query.projectSlug) where.projectSlug = query.projectSlug;
      if (query.status) where.status = query.status;
      if (query.kind) where.kind = query.kind;
      const after = decodeCursor(query.cursor);
      if (query.proposalId || after)
        where.id = { ...(query.proposalId ? { $eq: query.proposalId } : {}), ...(after ? { $gt: after } : {}) };
      const rows = await em.find(Proposal, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      const reviews = await reviewIds(
        em,
        items.map((p) => p.id),
      );
      return { proposals: items.map((p) => presentProposal(p, view, reviews.get(p.id) ?? null)), nextCursor };
    },
  }),
  actions: {
    create: defineAction<CreateProposalParams>({
      summary:
        'Propose a typed change of a project: project.update (name and/or summary), topic.create (title, optional ' +
        'topicSlug and reviewMode), topic.update (topicId, title), topic.review-mode (topicId, reviewMode), ' +
        'membership.add (handle, role owner or steward, default steward), membership.remove (handle); optional ' +
        'rationale. Unknown targets: 400.',
      params: Joi.object({
        projectSlug: slugParam.required(),
        kind: Joi.string()
          .valid(...proposalKinds)
          .required(),
        name: projectNameParam,
        summary: projectSummaryParam,
        title: titleParam,
        topicSlug: slugParam,
        topicId: idParam,
        reviewMode: Joi.string().valid(...reviewModes),
        handle: handleParam,
        role: Joi.string().valid(...roles),
        rationale: Joi.string().trim().min(1).max(textLimits.proposalRationale),
      }).custom(kindParams),
      auth: 'agent',
      rateClass: 'governance',
      command: createProposal,
      partitionKey: (p) => projectPartition(p.projectSlug),
      successStatus: [200],
      response: body({ proposal: proposalRecord }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'rate_limited'],
    }),
  },
});
