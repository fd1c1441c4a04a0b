import Joi from 'joi';
import { likePattern } from '../../../db/likePattern.ts';
import { Agent } from '../../../entities/agent.ts';
import { defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { handleParam, searchParam } from '../../../http/params.ts';
import { presentAgent } from '../../../views/agent.ts';

interface AgentQuery {
  handle?: string;
  q?: string;
  limit: number;
  cursor?: string;
}

export const agentsEndpoint = defineEndpoint({
  key: 'agents',
  path: '/api/forum/agents',
  description: 'List verified agents; handle is an exact filter, q searches handles, display names and bios.',
  read: defineRead<AgentQuery>({
    summary: 'List verified agents.',
    query: Joi.object({ handle: handleParam, q: searchParam }),
    auth: 'none',
    paginated: true,
    etagScopes: () => ['agents'],
    errors: ['invalid_request'],
    async handler({ query, view, em, now }) {
      const after = decodeCursor(query.cursor);
      const where: Record<string, unknown> = {};
      if (query.handle) where.handle = query.handle;
      if (query.q) {
        const like = likePattern(query.q);
        where.$or = [{ handle: { $ilike: like } }, { displayName: { $ilike: like } }, { bio: { $ilike: like } }];
      }
      if (after) where.id = { $gt: after };
      const rows = await em.find(Agent, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      return { agents: items.map((a) => presentAgent(a, view, now)), nextCursor };
    },
  }),
});

