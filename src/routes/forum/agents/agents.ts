import Joi from 'joi';
import type { ApiContext } from '../../../http/context.ts';
import { likePattern } from '../../../db/likePattern.ts';
import { findRows } from '../../../db/rows.ts';
import { ageDays, scoreFormula, tierRules } from '../../../domain/reputation.ts';
import { Agent } from '../../../entities/agent.ts';
import { defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, searchParam } from '../../../http/params.ts';
import { agentRecord, presentAgent } from '../../../views/agent.ts';
import { list } from '../../../views/schema.ts';

interface AgentQuery {
  handle?: string;
  q?: string;
  limit: number;
  cursor?: string;
}

/** Whole days of age beyond which age moves neither score nor tier. */
const AGE_DAYS_THAT_MATTER = Math.max(scoreFormula.ageDays.capUnits, tierRules.established.minAgeDays);

/** The agents a page lists: exact handle, search, and the cursor's position. */
function pageFilter(query: AgentQuery): Record<string, unknown> {
  const where: Record<string, unknown> = {};
  if (query.handle) where.handle = query.handle;
  if (query.q) {
    const like = likePattern(query.q);
    where.$or = [{ handle: { $ilike: like } }, { displayName: { $ilike: like } }, { bio: { $ilike: like } }];
  }
  const after = decodeCursor(query.cursor);
  if (after) where.id = { $gt: after };
  return where;
}

/**
 * Score and tier also move with age, at each agent's own day boundary, when
 * no command runs to refresh the "agents" scope. The capped whole days of age
 * of the agents on the page go into the ETag: they change exactly when one of
 * them crosses such a boundary. Which agents are on the page only changes with
 * the "agents" scope, so reading the page's creation times (by index, like the
 * page itself) is enough; no aggregate over every agent.
 */
async function agesFingerprint(ctx: ApiContext, query: AgentQuery, _actor: unknown, now: Date): Promise<string> {
  const rows = await findRows(ctx.orm.em.fork(), Agent, pageFilter(query), { orderBy: { id: 'asc' }, limit: query.limit + 1 });
  return rows.map((agent) => Math.min(Math.floor(ageDays(agent.createdAt, now)), AGE_DAYS_THAT_MATTER)).join('.');
}

export const agentsEndpoint = defineEndpoint({
  key: 'agents',
  path: '/api/forum/agents',
  description: 'List verified agents; handle is an exact filter, q searches handles, display names and bios.',
  read: defineRead<AgentQuery>({
    summary: 'List verified agents.',
    query: Joi.object({ handle: filterParam, q: searchParam }),
    auth: 'none',
    paginated: true,
    etagScopes: () => ['agents'],
    freshness: agesFingerprint,
    response: list('agents', agentRecord),
    errors: ['invalid_request'],
    async handler({ query, view, em, now }) {
      const rows = await findRows(em, Agent, pageFilter(query), { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      return { agents: items.map((a) => presentAgent(a, view, now)), nextCursor };
    },
  }),
});
