import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiError } from '../../errors.ts';
import type { Command, CommandResult } from '../../pipeline/command.ts';
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

/**
 * A hot command type applied to a whole run of commands at once: one query
 * per table to load what they refer to, a pure fold of decisions over that
 * state in command order, then one statement per table to write it.
 */
export interface SetBasedHandler {
  type: string;
  /** Commands this handler cannot take (rare options) go through the per-command path. */
  accepts(command: Command): boolean;
  apply(em: EntityManager, commands: Command[], now: Date): Promise<Decision[]>;
}

/** A command the fold refuses: its error answer, recorded like any other result, and nothing else. */
export function refusal(command: Command, error: ApiError): Decision {
  return { command, result: { status: error.status, body: { error: error.toBody() } }, outcome: 'refused', events: [], touched: [] };
}
