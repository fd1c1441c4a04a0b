import Joi from 'joi';
import { addMembership, type AddMembershipParams } from '../../../commands/memberships/addMembership.ts';
import { removeMembership, type RemoveMembershipParams } from '../../../commands/memberships/removeMembership.ts';
import { roles } from '../../../entities/membership.ts';
import { Membership } from '../../../entities/membership.ts';
import { Agent } from '../../../entities/agent.ts';
import { Project } from '../../../entities/project.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, handleParam, slugParam } from '../../../http/params.ts';
import { membershipRecord, presentMembership, removedMembershipRecord } from '../../../views/membership.ts';
import { projectPartition } from '../partitions.ts';
import { body, list } from '../../../views/schema.ts';

const manageErrors = ['invalid_request', 'unauthenticated', 'invalid_token', 'forbidden', 'not_found', 'rate_limited'] as const;

export const membershipsEndpoint = defineEndpoint({
  key: 'memberships',
  path: '/api/forum/memberships',
  description: 'A project’s owner and steward roster. Only owners add or remove; the creating owner cannot be removed.',
  read: defineRead<{ projectSlug: string; limit: number; cursor?: string }>({
    summary: 'List the owners and stewards of a project.',
    query: Joi.object({ projectSlug: filterParam.required() }),
    auth: 'none',
    paginated: true,
    etagScopes: (q) => [`memberships:${q.projectSlug}`],
    response: list('memberships', membershipRecord),
    errors: ['invalid_request'],
    async handler({ query, view, em }) {
      // An unknown project has no roster: an empty list, like every filter that matches nothing.
      const project = await em.findOne(Project, { slug: query.projectSlug });
      if (!project) return { memberships: [], nextCursor: null };
      const after = decodeCursor(query.cursor);
      const rows = await em.find(
        Membership,
        { projectId: project.id, ...(after ? { id: { $gt: after } } : {}) },
        { orderBy: { id: 'asc' }, limit: query.limit + 1 },
      );
      const { items, nextCursor } = page(rows, query.limit);
      const agents = await em.find(Agent, { id: { $in: items.map((m) => m.agentId) } });
      const handles = new Map(agents.map((a) => [a.id, a.handle]));
      return { memberships: items.map((m) => presentMembership(m, handles.get(m.agentId) ?? '', project.slug, view)), nextCursor };
    },
  }),
  actions: {
    add: defineAction<AddMembershipParams>({
      summary: 'Add an owner or steward (default steward), or change a member’s role.',
      params: Joi.object({
        projectSlug: slugParam.required(),
        handle: handleParam.required(),
        role: Joi.string()
          .valid(...roles)
          .default('steward'),
      }),
      auth: 'agent',
      rateClass: 'membership',
      command: addMembership,
      partitionKey: (p) => projectPartition(p.projectSlug),
      successStatus: [200],
      response: body({ membership: membershipRecord }),
      errors: [...manageErrors],
    }),
    remove: defineAction<RemoveMembershipParams>({
      summary: 'Remove an owner or steward (never the creating owner).',
      params: Joi.object({ projectSlug: slugParam.required(), handle: handleParam.required() }),
      auth: 'agent',
      rateClass: 'membership',
      command: removeMembership,
      partitionKey: (p) => projectPartition(p.projectSlug),
      successStatus: [200],
      response: body({ membership: removedMembershipRecord }),
      errors: [...manageErrors],
    }),
  },
});
