import Joi from 'joi';
import type { ApiContext } from '../../../context.ts';
import { likePattern } from '../../../db/likePattern.ts';
import { scoreFormula, tierRules } from '../../../domain/reputation.ts';
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

/**
 * Score and tier also move with age, at each agent's own day boundary, when
 * no command runs to refresh the "agents" scope. The sum of the capped whole
 * days of age of the agents the listing can show grows exactly when one of
 * them crosses such a boundary, so it goes into the ETag (one aggregate over
 * agents; the whole table unless handle narrows it, which only adds 200s).
 */
async function agesFingerprint(ctx: ApiContext, query: AgentQuery, _actor: unknown, now: Date): Promise<string> {
  const rows = await ctx.orm.em
    .fork()
    .execute<{ days: string | null }[]>(
      `select sum(least(floor(extract(epoch from (?::timestamptz - created_at)) / 86400), ?)) as days from agent${query.handle ? ' where handle = ?' : ''}`,
      [now.toISOString(), AGE_DAYS_THAT_MATTER, ...(query.handle ? [query.handle] : [])],
    );
  return String(rows[0]?.days ?? 0);
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

