import type { EntityManager } from '@mikro-orm/postgresql';
import { run } from '../db/postgres.ts';
import { statement, type Statement } from '../db/statements.ts';

export interface SignalChange {
  agentId: string;
  postCount?: number;
  votesCast?: number;
  supportReceived?: number;
  contestReceived?: number;
}

const columns = {
  postCount: 'post_count',
  votesCast: 'votes_cast',
  supportReceived: 'support_received',
  contestReceived: 'contest_received',
} as const;

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

/** Sums the changes per agent: one counter update per agent per batch. */
function sumSignals(changes: SignalChange[]): SignalChange[] {
  const byAgent = new Map<string, Required<SignalChange>>();
  for (const change of changes) {
    const sum = byAgent.get(change.agentId) ?? {
      agentId: change.agentId,
      postCount: 0,
      votesCast: 0,
      supportReceived: 0,
      contestReceived: 0,
    };
    sum.postCount += change.postCount ?? 0;
    sum.votesCast += change.votesCast ?? 0;
    sum.supportReceived += change.supportReceived ?? 0;
    sum.contestReceived += change.contestReceived ?? 0;
    byAgent.set(change.agentId, sum);
  }
  return [...byAgent.values()].filter((s) => s.postCount || s.votesCast || s.supportReceived || s.contestReceived);
}

/** The ETag scopes that signal changes move: each agent whose counters change, and the agent listings (their score). */
export function signalScopes(changes: SignalChange[]): string[] {
  const sums = sumSignals(changes);
  return sums.length === 0 ? [] : [...sums.map((s) => `agent:${s.agentId}`), 'agents'];
}

/**
 * adjustSignals for a run of hot commands (src/commands/hotCommand.ts):
 * in-place increments for many agents in one statement (each command
 * names the scopes of its own changes: signalScopes). The batch transaction locked every agent it may update at its
 * start, in id order (workers/batchTransaction.ts), so batches of different
 * partitions never deadlock on agents.
 */
export function signalWrites(changes: SignalChange[]): Statement[] {
  const sums = sumSignals(changes);
  if (sums.length === 0) return [];
  const write = statement(
    `update "agent" a set "post_count" = a."post_count" + v.pc, "votes_cast" = a."votes_cast" + v.vc,
            "support_received" = a."support_received" + v.sr, "contest_received" = a."contest_received" + v.cr
       from json_to_recordset(?::json) as v(id text, pc int, vc int, sr int, cr int)
      where a."id" = v.id`,
    [JSON.stringify(sums.map((s) => ({ id: s.agentId, pc: s.postCount, vc: s.votesCast, sr: s.supportReceived, cr: s.contestReceived })))],
  );
  return [write];
}
