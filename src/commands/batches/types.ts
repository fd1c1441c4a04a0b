import type { EntityManager } from '@mikro-orm/postgresql';
import type { Statement } from '../../db/statements.ts';
import type { ApiError } from '../../errors.ts';
import type { Command, CommandResult } from '../../pipeline/command.ts';
import { refusalResult } from '../../pipeline/results.ts';
import type { EventDraft } from '../types.ts';

/**
 * What a set-based handler decided for one command. Refusals change nothing
 * (their result is recorded like any other); the orchestrator writes every
 * decision's outbox events and processed_command row in one statement each.
 */
export interface Decision {
  command: Command;
  result: CommandResult;
  outcome: 'applied' | 'refused';
  events: EventDraft[];
  touched: string[];
}

/** Rows of a handler's reads, by the names it gave them (decoded from JSON: timestamps are ISO strings). */
export type LoadedRows = Record<string, unknown[]>;

/** The decisions of a run in command order, and the independent writes that carry them out. */
export interface Fold {
  decisions: Decision[];
  writes: Statement[];
}

/**
 * A hot command type applied to a whole run of commands at once: its reads
 * (one query per table, sent in one round trip with the batch's other reads),
 * a pure fold of decisions over them in command order, and writes that the
 * orchestrator sends as one statement (src/db/statements.ts).
 */
export interface SetBasedHandler {
  type: string;
  /** Commands this handler cannot take (rare options) go through the per-command path. */
  accepts(command: Command): boolean;
  /** `sentAt`: a time before the reads are sent (the batch's own time comes after them, so it is never earlier). */
  reads(commands: Command[], sentAt: Date): Record<string, Statement>;
  /** `em` only lends its metadata to the writes: deciding does no I/O. */
  decide(em: EntityManager, commands: Command[], rows: LoadedRows, now: Date): Fold;
}

/** A command the fold refuses: its error answer, recorded like any other result, and nothing else. */
export function refusal(command: Command, error: ApiError): Decision {
  return { command, result: refusalResult(error), outcome: 'refused', events: [], touched: [] };
}
