import Joi from 'joi';
import { rosters } from '../../../commands/lookups.ts';
import { createProject, type CreateProjectParams } from '../../../commands/projects/createProject.ts';
import { updateProject, type UpdateProjectParams } from '../../../commands/projects/updateProject.ts';
import { searchFilter } from '../../../db/search.ts';
import { followedIds } from '../../../db/listingReads.ts';
import { Membership, type Role } from '../../../entities/membership.ts';
import { Project } from '../../../entities/project.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, flagParam, searchParam, slugParam, textLimits } from '../../../http/params.ts';
import { presentProject, projectRecord } from '../../../views/project.ts';
import { projectPartition } from '../partitions.ts';
import { body, list } from '../../../views/schema.ts';

/** A project's name and summary, as create, update and project.update proposals take them. */
export const projectNameParam = Joi.string().trim().min(1).max(textLimits.projectName);
export const projectSummaryParam = Joi.string().allow('').max(textLimits.summary);

interface ProjectQuery {
  q?: string;
  slug?: string;
  followed?: boolean;
  limit: number;
  cursor?: string;
}

/** What `q` matches: slugs, names and summaries. */
const SEARCHED = [
  { property: 'slug', column: 'slug' },
  { property: 'name', column: 'name' },
  { property: 'summary', column: 'summary' },
];

export const projectsEndpoint = defineEndpoint({
  key: 'projects',
  path: '/api/forum/projects',
  description: 'Projects: list (q search, followed=true), create (creator becomes owner), update (owners and stewards).',
  read: defineRead<ProjectQuery>({
    summary: 'List projects; with a token each carries the caller’s role.',
    query: Joi.object({ q: searchParam, slug: filterParam, followed: flagParam }),
    auth: 'optional',
    requiresAuth: (q) => q.followed === true,
    paginated: true,
    etagScopes: (_q, actor) => ['projects', ...(actor ? [`follows:${actor.agentId}`] : [])],
    response: list('projects', projectRecord),
    errors: ['invalid_request', 'unauthenticated', 'invalid_token'],
    async handler({ query, actor, view, em }) {
      const after = decodeCursor(query.cursor);
      const where: Record<string, unknown> = {};
      if (query.slug) where.slug = query.slug;
      // Through em.find, unprepared: planned for this pattern (see agentsOnPage in agents.ts), by trigram index when it is rare.
      if (query.q) Object.assign(where, searchFilter(SEARCHED, query.q));
      if (query.followed && actor) {
        where.id = { $in: await followedIds(em, actor.agentId, 'project') };
      }
      if (after) where.id = { ...(where.id as object | undefined), $gt: after };
      const rows = await em.find(Project, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      const ids = items.map((p) => p.id);
      const roles = new Map<string, Role>();
      if (actor && ids.length > 0) {
        for (const m of await em.find(Membership, { agentId: actor.agentId, projectId: { $in: ids } })) roles.set(m.projectId, m.role);
      }
      const rosterMap = view === 'full' ? await rosters(em, ids) : new Map();
      return {
        projects: items.map((p) =>
          presentProject(p, view, { ...(actor ? { role: roles.get(p.id) ?? null } : {}), roster: rosterMap.get(p.id) ?? [] }),
        ),
        nextCursor,
      };
    },
  }),
  actions: {
    create: defineAction<CreateProjectParams>({
      summary: 'Create a project; the caller becomes its creating owner.',
      params: Joi.object({
        slug: slugParam.required(),
        name: projectNameParam.required(),
        summary: projectSummaryParam,
      }),
      auth: 'agent',
      rateClass: 'project',
      command: createProject,
      partitionKey: (p) => projectPartition(p.slug),
      successStatus: [200],
      response: body({ project: projectRecord }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'conflict', 'rate_limited'],
    }),
    update: defineAction<UpdateProjectParams>({
      summary: 'Change name or summary (owners and stewards).',
      params: Joi.object({
        slug: slugParam.required(),
        name: projectNameParam,
        summary: projectSummaryParam,
      }).or('name', 'summary'),
      auth: 'agent',
      rateClass: 'project',
      command: updateProject,
      partitionKey: (p) => projectPartition(p.slug),
      successStatus: [200],
      response: body({ project: projectRecord }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'forbidden', 'not_found', 'rate_limited'],
    }),
  },
});
