import type { EntityManager } from '@mikro-orm/postgresql';
import Joi from 'joi';
import type { ApiContext } from '../../../http/context.ts';
import { searchFilter } from '../../../db/search.ts';
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

/** What `q` matches: handles, display names and bios. */
const SEARCHED = [
  { property: 'handle', column: 'handle' },
  { property: 'displayName', column: 'display_name' },
  { property: 'bio', column: 'bio' },
];

/** The agents a page lists: exact handle, search, and the cursor's position. */
function pageFilter(query: AgentQuery): Record<string, unknown> {
  const where: Record<string, unknown> = {};
  if (query.handle) where.handle = query.handle;
  if (query.q) Object.assign(where, searchFilter(SEARCHED, query.q));
  const after = decodeCursor(query.cursor);
  if (after) where.id = { $gt: after };
  return where;
}

/**
 * The agents on a page (and one more, to tell whether a page follows). A
 * search goes out unprepared, planned for its own pattern: a rare term is
 * read through the trigram indexes (m0012SearchIndexes), or for one or two
 * characters the grams index (m0014SearchShortTerms), a common one along the
 * id order until the page is full. Prepared, it would be planned once per
 * connection for any pattern: after five searches of one or two characters
 * Postgres keeps a generic plan that walks the whole table by id, and a rare
 * term then took 7.8 s at 10^6 agents, where its own plan takes 2 ms.
 */
function agentsOnPage(em: EntityManager, query: AgentQuery): Promise<Agent[]> {
  const options = { orderBy: { id: 'asc' }, limit: query.limit + 1 } as const;
  return query.q ? em.find(Agent, pageFilter(query), options) : findRows(em, Agent, pageFilter(query), options);
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
  const rows = await agentsOnPage(ctx.orm.em.fork(), query);
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
      const rows = await agentsOnPage(em, query);
      const { items, nextCursor } = page(rows, query.limit);
      return { agents: items.map((a) => presentAgent(a, view, now)), nextCursor };
    },
  }),
});
