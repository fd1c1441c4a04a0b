import type { EntityManager } from '@mikro-orm/postgresql';
import { run } from '../db/postgres.ts';
import { combinedRead, combinedWrite, splitRead, type Statement } from '../db/statements.ts';
import type { ApiError } from '../errors.ts';
import type { Command, CommandResult } from '../pipeline/command.ts';
import { refusalResult } from '../pipeline/results.ts';
import { signalScopes, signalWrites, type SignalChange } from './agentSignals.ts';
import type { CommandHandler, EventDraft } from './types.ts';

/** Rows of a hot command's reads, by the names it gave them (decoded from JSON: timestamps are ISO strings). */
export type LoadedRows = Record<string, unknown[]>;

/** What `decide` answers for one command: a refusal (which changes nothing), or the answer and what it changes. */
export type Decided<Change> =
  | { kind: 'refused'; error: ApiError }
  | {
      kind: 'applied';
      /** What `evolve` folds into the state; null when the command changes nothing (a follow that exists already). */
      change: Change | null;
      body: Record<string, unknown>;
      events: EventDraft[];
      touched: string[];
      signals: SignalChange[];
    };

/**
 * A hot write (post.create, vote.cast, follow.*, flag.create) as one module
 * that both paths run: what it reads for a run of commands (one query per
 * table, sent together with the batch's other reads), `decide` for one
 * command over the state loaded from those rows, `evolve` that folds an
 * applied command's change into the state (so a later command of the run
 * sees it), and the writes that carry the run's changes out (one statement
 * per table). The set-based batch (workers/applySetBased.ts) runs it for a
 * run of commands, a command alone is a run of one; refusals are decided,
 * not thrown, on both. `handle` (the unit of work's contract) is for a hot
 * command in a batch with other commands.
 */
export interface HotCommand<P = Record<string, unknown>, State = unknown, Change = unknown> extends CommandHandler<P> {
  /** Commands this module cannot take (a post that opens a review case) go through `handle` alone. */
  accepts(command: Command): boolean;
  /** `sentAt`: a time before the reads are sent (the batch's own time comes after them, so it is never earlier). */
  reads(commands: Command[], sentAt: Date): Record<string, Statement>;
  /** The loaded rows as the state `decide` reads; `em` only lends its metadata. */
  load(em: EntityManager, rows: LoadedRows): State;
  decide(state: State, command: Command, now: Date): Decided<Change>;
  evolve(state: State, change: Change): void;
  /** The writes of every change folded into `state`; `em` only lends its metadata. */
  writes(em: EntityManager, state: State, now: Date): Statement[];
}

/**
 * What a run decided for one command. Refusals change nothing (their result
 * is recorded like any other); the batch writes every decision's outbox
 * events and processed_command row in one statement each.
 */
export interface Decision {
  command: Command;
  result: CommandResult;
  outcome: 'applied' | 'refused';
  events: EventDraft[];
  touched: string[];
  /** A refusal's error. */
  error?: ApiError;
}

/** A run's decisions in command order, and the independent writes that carry them out. */
export interface Fold {
  decisions: Decision[];
  writes: Statement[];
}

/** decide and evolve over a run of commands of one type, in order; then the run's writes, its agents' counters with them. */
export function fold<P, State, Change>(
  em: EntityManager,
  hot: HotCommand<P, State, Change>,
  commands: Command[],
  rows: LoadedRows,
  now: Date,
): Fold {
  const state = hot.load(em, rows);
  const signals: SignalChange[] = [];
  const decisions = commands.map((command): Decision => {
    const decided = hot.decide(state, command, now);
    if (decided.kind === 'refused')
      return { command, result: refusalResult(decided.error), outcome: 'refused', events: [], touched: [], error: decided.error };
    if (decided.change !== null) hot.evolve(state, decided.change);
    signals.push(...decided.signals);
    // Its own scopes only, those of its counters too: they are recorded with its result (src/pipeline/results.ts).
    const touched = [...decided.touched, ...signalScopes(decided.signals)];
    return { command, result: { status: 200, body: decided.body }, outcome: 'applied', events: decided.events, touched };
  });
  return { decisions, writes: [...hot.writes(em, state, now), ...signalWrites(signals)] };
}

type HotParts<P, State, Change> = Omit<HotCommand<P, State, Change>, 'handle'> & Partial<Pick<HotCommand<P, State, Change>, 'handle'>>;

/**
 * A hot command's module. Its `handle`, unless it brings one, runs the
 * module for the one command on the unit of work's transaction, through
 * bound statements: the reads after the unit of work's pending changes are
 * flushed, the writes at once, a refusal thrown as the unit of work expects.
 */
export function defineHotCommand<P, State, Change>(parts: HotParts<P, State, Change>): HotCommand<P, State, Change> {
  const hot: HotCommand<P, State, Change> = {
    ...parts,
    handle:
      parts.handle ??
      (async ({ em, command, now, emit, touch }) => {
        await em.flush();
        const reads = hot.reads([command], now);
        const [row] = await run(em, combinedRead(reads));
        const { decisions, writes } = fold(em, hot, [command], splitRead(reads, row), now);
        const [decision] = decisions as [Decision];
        if (decision.error) throw decision.error;
        if (writes.length > 0) await run(em, combinedWrite(writes));
        decision.events.forEach(emit);
        touch(...decision.touched);
        return decision.result;
      }),
  };
  return hot;
}

export function isHotCommand(handler: CommandHandler): handler is HotCommand {
  return 'decide' in handler;
}
