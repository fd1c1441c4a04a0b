import type { EntityManager } from '@mikro-orm/postgresql';
import { run, type Row } from './postgres.ts';
import { ANY_OF, distinct, statement } from './statements.ts';

/** The reads a listing makes besides its own rows: what an agent follows, who an author name means, the latest updates of relay cases. */

/** The ids of the projects (or topics) an agent follows. */
export async function followedIds(em: EntityManager, agentId: string, targetType: 'project' | 'topic'): Promise<string[]> {
  const rows = await run<{ target_id: string }>(
    em,
    statement('select target_id from follow where agent_id = ? and target_type = ?', [agentId, targetType]),
  );
  return rows.map((row) => row.target_id);
}

/** Agents whose verified handle is `author`, or whose current display name is it (case-insensitive). */
export async function agentIdsNamed(em: EntityManager, author: string): Promise<string[]> {
  const rows = await run<{ id: string }>(
    em,
    statement('select id from agent where handle = ? or lower(display_name) = lower(?)', [author, author]),
  );
  return rows.map((row) => row.id);
}

/**
 * The last `perCase + 1` updates of each case an agent may see (operators
 * see every update), oldest first per case, each with its rank from the
 * newest: a rank past `perCase` says older ones exist.
 */
export function latestRelayUpdates(
  em: EntityManager,
  references: string[],
  operator: boolean,
  perCase: number,
): Promise<(Row & { rank: string | number })[]> {
  return run(
    em,
    statement(
      `select * from (
         select u.*, row_number() over (partition by u.case_reference order by u.sequence desc) as rank
           from relay_update u
          where u.case_reference = ${ANY_OF} and (? or u.visibility = 'agent')
       ) ranked where rank <= ? order by case_reference, sequence`,
      [distinct(references), operator, perCase + 1],
    ),
  );
}
