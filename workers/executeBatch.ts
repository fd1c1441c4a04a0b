/**
 * executeBatch: applies one partition's batch of commands in one transaction,
 * and when that fails, one command at a time, so only the culprit fails.
 * The transaction is set-based when every command is a hot command's
 * (workers/applySetBased.ts: decided together at a constant number of round
 * trips, refusals returned), otherwise every command's handler on one unit
 * of work; a command alone on the unit of work runs in a savepoint when it
 * is refused, so its refusal is recorded.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from '../config/settings.ts';
import { commandHandlers } from '../src/commands/index.ts';
import type { CommandContext, CommandHandler, EventDraft } from '../src/commands/types.ts';
import { requireActor } from '../src/commands/types.ts';
import { OutboxEvent } from '../src/entities/outboxEvent.ts';
import { ApiError } from '../src/errors.ts';
import { currentCommand, type Command, type CommandResult } from '../src/pipeline/command.ts';
import { findResult, findResults, queueResult, recordResult, refusalResult } from '../src/pipeline/results.ts';
import { applySetBased, takesSetBasedPath } from './applySetBased.ts';
import { lockBatch, outboxRow, replayed, type Applied, type Execution } from './batchTransaction.ts';

export type { Applied, Execution } from './batchTransaction.ts';

/** A command of a batch that could not be applied even on its own (a bug or an outage); BullMQ retries it. */
export interface Failure {
  command: Command;
  error: Error;
}

/** A refusal is recorded too (inside the batch transaction), so a re-run of the same command answers the same. */
async function recordRejection(em: EntityManager, command: Command, error: ApiError): Promise<Execution> {
  const result = refusalResult(error);
  await recordResult(em, command, result, new Date());
  return { command, result, outcome: 'refused', touched: [] };
}

/**
 * Runs the command's handler on `em` and queues its outbox events and its
 * processed_command row there: they commit with the change, or not at all.
 */
async function runHandler(
  em: EntityManager,
  settings: Settings,
  command: Command,
  handler: CommandHandler,
): Promise<{ result: CommandResult; touched: string[]; expiredCredentials: string[] }> {
  const touched = new Set<string>();
  const expiredCredentials: string[] = [];
  const events: EventDraft[] = [];
  const now = new Date();
  const ctx: CommandContext<Record<string, unknown>> = {
    em,
    command,
    params: command.data,
    view: command.view,
    now,
    settings,
    actor: () => requireActor(command.actor),
    emit: (event) => events.push(event),
    touch: (...scopes) => {
      for (const s of scopes) touched.add(s);
    },
    expireCredentials: (...hashes) => expiredCredentials.push(...hashes),
  };
  const result = await handler.handle(ctx);
  for (const event of events) {
    em.create(OutboxEvent, outboxRow(command, event, now));
  }
  queueResult(em, command, result, now, { touched: [...touched], expiredCredentials });
  return { result, touched: [...touched], expiredCredentials };
}

/**
 * A command inside its transaction, in a savepoint: its changes, its outbox
 * events and its command id commit together, and a refusal rolls back only
 * the savepoint, its error recorded as the command's result.
 */
async function applyOne(outer: EntityManager, settings: Settings, command: Command): Promise<Execution> {
  // A separate statement after the partition locks: under READ COMMITTED its snapshot
  // sees a run of this command that committed while we waited for the lock.
  const earlier = await findResult(outer, command.commandId);
  if (earlier) return replayed(command, earlier);
  const handler = commandHandlers.get(command.type);
  if (!handler) return recordRejection(outer, command, new ApiError('invalid_action', `unknown command ${command.type}`));
  try {
    const { result, touched, expiredCredentials } = await outer.transactional((em) => runHandler(em, settings, command, handler));
    return { command, result, outcome: 'applied', touched, expiredCredentials };
  } catch (error) {
    if (error instanceof ApiError) return recordRejection(outer, command, error);
    if (error instanceof UniqueConstraintViolationException)
      return recordRejection(outer, command, new ApiError('conflict', 'the change conflicts with an existing record'));
    throw error;
  }
}

/** A command alone whose handler refused it: again, in a savepoint that absorbs the refusal. */
async function applyRefused(root: EntityManager, settings: Settings, command: Command): Promise<Execution> {
  return root.fork().transactional(async (outer) => {
    await lockBatch(outer, [command]);
    return applyOne(outer, settings, command);
  });
}

/** What the caller hears of a batch on its way. */
export interface BatchHooks {
  /** The batch is applied again, one command at a time. */
  onRetry?: (mode: 'one_by_one', commands: Command[], cause: Error) => void;
  /**
   * Before a transaction whose outbox rows could wait for a publisher (the unit of work's paths): the worker marks the
   * outbox dirty there, so that a crash after the commit leaves the mark (src/store/ledgerMarks.ts). A set-based
   * transaction publishes its own events with its commit and never calls it.
   */
  beforeOutboxWrites?: () => Promise<void>;
}

/** Thrown inside the unit of work's path when a command is refused: nothing of the batch commits. */
class Refused extends Error {}

/**
 * Commands that are not all hot, on one shared unit of work: one lookup of
 * earlier runs for the whole batch, no savepoints, and inserts of one table
 * grouped at flush. Any refusal or conflict rolls the whole transaction back.
 */
async function applyOptimistically(root: EntityManager, settings: Settings, commands: Command[]): Promise<Execution[]> {
  return root.fork().transactional(async (em) => {
    await lockBatch(em, commands);
    // After the locks, so that runs committed while we waited are seen (READ COMMITTED).
    const earlier = await findResults(
      em,
      commands.map((c) => c.commandId),
    );
    const executions: Execution[] = [];
    for (const command of commands) {
      const seen = earlier.get(command.commandId);
      if (seen) {
        executions.push(replayed(command, seen));
        continue;
      }
      const handler = commandHandlers.get(command.type);
      if (!handler) throw new Refused('unknown command');
      try {
        executions.push({ command, outcome: 'applied', ...(await runHandler(em, settings, command, handler)) });
      } catch (error) {
        if (error instanceof ApiError || error instanceof UniqueConstraintViolationException) throw new Refused('refusal');
        throw error;
      }
    }
    return executions;
  });
}

/**
 * The batch in one transaction: set-based when every command is hot, otherwise on the unit of work; a
 * command alone that is refused, again with its refusal recorded.
 */
async function applyTogether(root: EntityManager, settings: Settings, commands: Command[], hooks: BatchHooks): Promise<Applied> {
  if (takesSetBasedPath(commands)) return applySetBased(root, commands);
  await hooks.beforeOutboxWrites?.();
  try {
    return { executions: await applyOptimistically(root, settings, commands), publication: null };
  } catch (error) {
    if (!(error instanceof Refused) || commands.length > 1) throw error;
  }
  return { executions: [await applyRefused(root, settings, commands[0] as Command)], publication: null };
}

/**
 * Applies a batch of commands of one partition in one transaction: one
 * commit and one set of partition locks for many commands. If the batch
 * fails as a whole (a refusal on the unit of work, a conflict, a failure),
 * each command on its own, so only the culprit fails. A command seen before
 * answers its first result and changes nothing.
 */
export async function executeBatch(
  root: EntityManager,
  settings: Settings,
  enqueued: Command[],
  hooks: BatchHooks = {},
): Promise<Applied & { failures: Failure[] }> {
  // A command from an API older than Command.view carries the view in its data.
  const commands = enqueued.map(currentCommand);
  try {
    return { ...(await applyTogether(root, settings, commands, hooks)), failures: [] };
  } catch (error) {
    if (commands.length === 1)
      return { executions: [], publication: null, failures: [{ command: commands[0] as Command, error: error as Error }] };
    hooks.onRetry?.('one_by_one', commands, error as Error);
  }
  const executions: Execution[] = [];
  const failures: Failure[] = [];
  for (const command of commands) {
    const alone = await executeBatch(root, settings, [command], hooks);
    executions.push(...alone.executions);
    failures.push(...alone.failures);
  }
  // Each command alone may have published in its own transaction; those go unannounced, and the worker
  // treats the batch as unpublished (dirty mark, publisher nudged), which announces the head from Postgres.
  return { executions, publication: null, failures };
}
