import type { EntityManager } from '@mikro-orm/postgresql';
import { fold, type Decision, type HotCommand, type LoadedRows } from '../src/commands/hotCommand.ts';
import { hotCommands } from '../src/commands/index.ts';
import { transaction } from '../src/db/postgres.ts';
import { combinedRead, combinedWrite, splitRead, type Statement } from '../src/db/statements.ts';
import type { Command } from '../src/pipeline/command.ts';
import { findResultsStatement, recordResultsStatement, resultsByCommand, type Recorded } from '../src/pipeline/results.ts';
import { failpoint } from '../src/failpoints.ts';
import { claimInTrip, PUBLISH_BATCH } from '../src/ledger/publication.ts';
import { lockBatchStatements, outboxRow, replayed, type Applied, type Execution } from './batchTransaction.ts';

/** Whether every command is one a hot command's module takes (src/commands/hotCommand.ts). */
export function takesSetBasedPath(commands: Command[]): boolean {
  return commands.every((command) => hotCommands.get(command.type)?.accepts(command) ?? false);
}

/** Consecutive commands of one type: a later run must see what an earlier one wrote. */
function runsOf(commands: Command[]): { hot: HotCommand; commands: Command[] }[] {
  const runs: { hot: HotCommand; commands: Command[] }[] = [];
  for (const command of commands) {
    const last = runs.at(-1);
    if (last && last.hot.type === command.type) last.commands.push(command);
    else runs.push({ hot: hotCommands.get(command.type) as HotCommand, commands: [command] });
  }
  return runs;
}

/**
 * A batch of hot commands at a constant number of round trips, whatever its
 * size, each carrying several statements, pipelined (src/db/postgres.ts): begin, the
 * locks, the lookup of earlier runs and the first run's reads; a run's
 * writes with the next run's reads; the last writes with every
 * processed_command row, the ledger's lock and the claim of the pending
 * events; the ledger rows of those and of the batch's own events, and commit (a batch that emits no event commits
 * with its last writes instead). A batch of one command type is three round
 * trips, its publication included. Refusals are decided, not thrown, so they
 * cost nothing extra; a command id seen twice in the batch answers its first
 * result. Anything unexpected throws, and the batch goes the per-command way.
 */
export async function applySetBased(root: EntityManager, commands: Command[]): Promise<Applied> {
  // Each command once (a retry can land in the batch of its first attempt).
  const unique = [...new Map(commands.map((c) => [c.commandId, c])).values()];
  return transaction(root, async (trips) => {
    // The batch's time is taken once its locks are held, as on the per-command paths: it never precedes
    // the commit of a batch this one waited for. The reads only need a time that is not later.
    let now = new Date();
    let earlier = new Map<string, Recorded>();
    const decided = new Map<string, Decision>();
    let writes: Statement[] = [];
    for (const [index, run] of runsOf(unique).entries()) {
      const reads = run.hot.reads(run.commands, now);
      let rows: LoadedRows;
      if (index === 0) {
        // After the locks, in statements of their own, so that runs committed while we waited are seen (READ COMMITTED).
        const first = { ...reads, processedCommands: findResultsStatement(unique.map((c) => c.commandId)) };
        const results = await trips.send([...lockBatchStatements(commands), combinedRead(first)]);
        failpoint('batch-mid-transaction');
        now = new Date();
        const { processedCommands, ...loaded } = splitRead(first, results.at(-1)?.[0]);
        earlier = resultsByCommand(processedCommands);
        rows = loaded;
      } else {
        // The writes first: this run must see what the one before wrote.
        const results = await trips.send([...(writes.length > 0 ? [combinedWrite(writes)] : []), combinedRead(reads)]);
        writes = [];
        rows = splitRead(reads, results.at(-1)?.[0]);
      }
      const fresh = run.commands.filter((c) => !earlier.has(c.commandId));
      if (fresh.length === 0) continue;
      const folded = fold(root, run.hot, fresh, rows, now);
      for (const decision of folded.decisions) decided.set(decision.command.commandId, decision);
      writes.push(...folded.writes);
    }
    const own = [...decided.values()].flatMap((d) => d.events.map((event) => outboxRow(d.command, event, now)));
    if (decided.size > 0) writes.push(recordResultsStatement(root, [...decided.values()], now));
    const answered = new Set<string>();
    const executions = commands.map((command): Execution => {
      const first = !answered.has(command.commandId);
      answered.add(command.commandId);
      const decision = decided.get(command.commandId);
      if (decision && first) return { command, result: decision.result, outcome: decision.outcome, touched: decision.touched };
      // A second copy of a command decided in this batch: the first copy refreshes what it changed.
      if (decision) return { command, result: decision.result, outcome: 'replayed', touched: [] };
      return replayed(command, earlier.get(command.commandId) as Recorded);
    });
    if (own.length === 0) return { commit: writes.length > 0 ? [combinedWrite(writes)] : [], result: { executions, publication: null } };
    // The batch publishes its own events: its writes, then the ledger's lock and claim, in one trip; the ledger rows
    // with commit. The events reach the ledger with the batch's commit, not a publisher's round later: they never wait,
    // so they get no outbox row (src/ledger/publication.ts).
    const claim = claimInTrip(PUBLISH_BATCH, 'wait', own);
    const results = await trips.send([combinedWrite(writes), ...claim.statements]);
    const claimed = claim.decide(root, results, new Date());
    return { commit: claimed?.writes ?? [], result: { executions, publication: claimed?.publication ?? null } };
  });
}
