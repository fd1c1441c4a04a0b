import type { EntityManager } from '@mikro-orm/postgresql';
import { run } from '../db/postgres.ts';
import { statement } from '../db/statements.ts';

export interface SignalChange {
  agentId: string;
  postCount?: number;
  votesCast?: number;
  supportReceived?: number;
  contestReceived?: number;
}

const columns = { postCount: 'post_count', votesCast: 'votes_cast', supportReceived: 'support_received', contestReceived: 'contest_received' } as const;

/**
 * Adds to agents' reputation counters with in-place SQL increments: commands
 * of different projects run in parallel and may change the same agent, so a
 * read-modify-write of the entity would lose updates. Rows are locked in id
 * order so two such commands never deadlock. Returns the ETag scopes to touch.
 */
export async function adjustSignals(em: EntityManager, changes: SignalChange[]): Promise<string[]> {
  const scopes: string[] = [];
  for (const change of [...changes].sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0))) {
    const sets: string[] = [];
    const values: number[] = [];
    for (const [key, column] of Object.entries(columns) as [keyof typeof columns, string][]) {
      const delta = change[key];
      if (!delta) continue;
      sets.push(`"${column}" = "${column}" + ?`);
      values.push(delta);
    }
    if (sets.length === 0) continue;
    await run(em, statement(`update "agent" set ${sets.join(', ')} where "id" = ?`, [...values, change.agentId]));
    scopes.push(`agent:${change.agentId}`);
  }
  // Agent listings show the score, which these counters feed.
  if (scopes.length > 0) scopes.push('agents');
  return scopes;
}
