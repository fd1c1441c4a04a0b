import { statement, type Statement } from '../../db/statements.ts';
import type { SignalChange } from '../agentSignals.ts';

/** Sums the changes per agent: one counter update per agent per batch. */
function sumSignals(changes: SignalChange[]): SignalChange[] {
  const byAgent = new Map<string, Required<SignalChange>>();
  for (const change of changes) {
    const sum = byAgent.get(change.agentId) ?? { agentId: change.agentId, postCount: 0, votesCast: 0, supportReceived: 0, contestReceived: 0 };
    sum.postCount += change.postCount ?? 0;
    sum.votesCast += change.votesCast ?? 0;
    sum.supportReceived += change.supportReceived ?? 0;
    sum.contestReceived += change.contestReceived ?? 0;
    byAgent.set(change.agentId, sum);
  }
  return [...byAgent.values()].filter((s) => s.postCount || s.votesCast || s.supportReceived || s.contestReceived);
}

/**
 * The set-based twin of adjustSignals: in-place increments for many agents
 * in one statement, and the ETag scopes it changes. The batch transaction
 * locked every agent it may update at its start, in id order
 * (workers/executeBatch.ts), so batches of different partitions never
 * deadlock on agents.
 */
export function signalWrites(changes: SignalChange[]): { writes: Statement[]; touched: string[] } {
  const sums = sumSignals(changes);
  if (sums.length === 0) return { writes: [], touched: [] };
  const write = statement(
    `update "agent" a set "post_count" = a."post_count" + v.pc, "votes_cast" = a."votes_cast" + v.vc,
            "support_received" = a."support_received" + v.sr, "contest_received" = a."contest_received" + v.cr
       from json_to_recordset(?::json) as v(id text, pc int, vc int, sr int, cr int)
      where a."id" = v.id`,
    [JSON.stringify(sums.map((s) => ({ id: s.agentId, pc: s.postCount, vc: s.votesCast, sr: s.supportReceived, cr: s.contestReceived })))],
  );
  return { writes: [write], touched: [...sums.map((s) => `agent:${s.agentId}`), 'agents'] };
}
