import type { EntityManager } from '@mikro-orm/postgresql';
import { run } from '../db/postgres.ts';
import { ANY_OF, distinct, insertRows, statement, type Statement } from '../db/statements.ts';
import { ProcessedCommand } from '../entities/processedCommand.ts';
import { ApiError } from '../errors.ts';
import type { Command, CommandResult } from './command.ts';

/**
 * The one owner of command results, as hapi's failAction owns errors: how a
 * refusal becomes a result, the answer to a command that failed on every
 * attempt, and how results are recorded in processed_command (the record
 * that makes a command apply once) and found again.
 */

/** A refused command's result: its error, recorded and replayed like any other answer. */
export function refusalResult(error: ApiError): CommandResult {
  return { status: error.status, body: { error: error.toBody() } };
}

/** The answer to a command that failed on every attempt and committed nothing. */
export const GAVE_UP: CommandResult = refusalResult(
  new ApiError('service_unavailable', 'the command failed on every attempt; nothing was applied, retry later'),
);

/**
 * What the worker refreshes after a command's commit: the ETag scopes it changed and the cached credentials it
 * expired. Recorded with its result, so that a re-run which finds the result (its first run died between the commit
 * and the after-commit pipeline) refreshes them too: otherwise a conditional read answers 304 over the change, and a
 * revoked token stays cached.
 */
export interface Refreshes {
  touched: string[];
  expiredCredentials: string[];
}

/** A command's recorded outcome: its result, and what its commit refreshes. */
export interface Recorded {
  result: CommandResult;
  refreshes: Refreshes;
}

const NOTHING_TO_REFRESH: Refreshes = { touched: [], expiredCredentials: [] };

interface ResultRow {
  command_id: string;
  status: number;
  body: Record<string, unknown>;
  /** Null for a refusal recorded on its own, and for rows recorded before m0015. */
  refreshes: Refreshes | null;
}

/** The statement that finds earlier results of these commands (for a batch's grouped reads). */
export function findResultsStatement(commandIds: string[]): Statement {
  return statement(`select command_id, status, body, refreshes from processed_command where command_id = ${ANY_OF}`, [
    distinct(commandIds),
  ]);
}

/** The rows of findResultsStatement, by command id. */
export function resultsByCommand(rows: unknown[]): Map<string, Recorded> {
  return new Map(
    (rows as ResultRow[]).map((row) => [
      row.command_id,
      { result: { status: row.status, body: row.body }, refreshes: row.refreshes ?? NOTHING_TO_REFRESH },
    ]),
  );
}

/** Earlier outcomes of these commands, by command id (one statement). */
export async function findResults(em: EntityManager, commandIds: string[]): Promise<Map<string, Recorded>> {
  if (commandIds.length === 0) return new Map();
  return resultsByCommand(await run(em, findResultsStatement(commandIds)));
}

/** A command's recorded outcome, or null when it has not committed. */
export async function findResult(em: EntityManager, commandId: string): Promise<Recorded | null> {
  return (await findResults(em, [commandId])).get(commandId) ?? null;
}

function row(command: Command, result: CommandResult, now: Date, refreshes: Refreshes | null) {
  return { commandId: command.commandId, type: command.type, status: result.status, body: result.body, refreshes, createdAt: now };
}

/** Queues the record in `em`'s unit of work: it commits with the command's own changes, at their flush. */
export function queueResult(em: EntityManager, command: Command, result: CommandResult, now: Date, refreshes: Refreshes): void {
  em.create(ProcessedCommand, row(command, result, now, refreshes));
}

/** The records of many commands as one insert statement (the set-based batch's grouped writes; hot commands expire no credential). */
export function recordResultsStatement(
  em: EntityManager,
  entries: { command: Command; result: CommandResult; touched: string[] }[],
  now: Date,
): Statement {
  return insertRows(
    em,
    ProcessedCommand,
    entries.map(({ command, result, touched }) => row(command, result, now, { touched, expiredCredentials: [] })),
  );
}

/** Records a result now, outside any unit of work: a refusal after its savepoint rolled back. */
export async function recordResult(em: EntityManager, command: Command, result: CommandResult, now: Date): Promise<void> {
  await run(
    em,
    statement(
      'insert into processed_command (command_id, type, status, body, created_at) values (?, ?, ?, ?, ?) on conflict (command_id) do nothing',
      [command.commandId, command.type, result.status, JSON.stringify(result.body), now],
    ),
  );
}
