import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from '../config/settings.ts';
import { commandHandlers } from '../src/commands/index.ts';
import type { CommandContext, EventDraft } from '../src/commands/types.ts';
import { requireActor } from '../src/commands/types.ts';
import { OutboxEvent } from '../src/entities/outboxEvent.ts';
import { ProcessedCommand } from '../src/entities/processedCommand.ts';
import { ApiError } from '../src/errors.ts';
import type { Command, CommandResult } from '../src/pipeline/command.ts';

export interface Execution {
  command: Command;
  result: CommandResult;
  /** ETag scopes to refresh; empty when this run only found an earlier result. */
  touched: string[];
}

/** A command of a batch that could not be applied even on its own (a bug or an outage); BullMQ retries it. */
export interface Failure {
  command: Command;
  error: Error;
}

function rejection(error: ApiError): CommandResult {
  return { status: error.status, body: { error: error.toBody() } };
}

/** A refusal is recorded too (inside the batch transaction), so a re-run of the same command answers the same. */
async function recordRejection(em: EntityManager, command: Command, error: ApiError): Promise<Execution> {
  const result = rejection(error);
  await em.execute('insert into processed_command (command_id, type, status, body, created_at) values (?, ?, ?, ?, now()) on conflict (command_id) do nothing', [
    command.commandId,
    command.type,
    result.status,
    JSON.stringify(result.body),
  ]);
  return { command, result, touched: [] };
}

/**
 * One command inside the batch transaction, in a savepoint: its changes,
 * its outbox events and its command id commit together, and a refusal rolls
 * back only this command.
 */
async function applyOne(outer: EntityManager, settings: Settings, command: Command): Promise<Execution> {
  // A separate statement after the partition locks: under READ COMMITTED its snapshot
  // sees a run of this command that committed while we waited for the lock.
  const earlier = await outer.findOne(ProcessedCommand, { commandId: command.commandId });
  if (earlier) return { command, result: { status: earlier.status, body: earlier.body }, touched: [] };
  const handler = commandHandlers.get(command.type);
  if (!handler) return recordRejection(outer, command, new ApiError('invalid_action', `unknown command ${command.type}`));

  const touched = new Set<string>();
  try {
    const result = await outer.transactional(async (em) => {
      const events: EventDraft[] = [];
      const now = new Date();
      const ctx: CommandContext<Record<string, unknown>> = {
        em,
        command,
        params: command.data,
        now,
        settings,
        actor: () => requireActor(command.actor),
        emit: (event) => events.push(event),
        touch: (...scopes) => scopes.forEach((s) => touched.add(s)),
      };
      const outcome = await handler.handle(ctx);
      for (const event of events) {
        em.create(OutboxEvent, {
          type: event.type,
          projectSlug: event.projectSlug ?? null,
          topicSlug: event.topicSlug ?? null,
          actor: event.actor === null ? null : (command.actor?.handle ?? null),
          subjectId: event.subjectId ?? null,
          data: event.data ?? {},
          commandId: command.commandId,
          createdAt: now,
          publishedAt: null,
        });
      }
      em.create(ProcessedCommand, { commandId: command.commandId, type: command.type, status: outcome.status, body: outcome.body, createdAt: now });
      return outcome;
    });
    return { command, result, touched: [...touched] };
  } catch (error) {
    if (error instanceof ApiError) return recordRejection(outer, command, error);
    if (error instanceof UniqueConstraintViolationException) return recordRejection(outer, command, new ApiError('conflict', 'the change conflicts with an existing record'));
    throw error;
  }
}

async function applyBatch(root: EntityManager, settings: Settings, commands: Command[]): Promise<Execution[]> {
  return root.fork().transactional(async (outer) => {
    // The database's own guard behind queue serialization. Keys of one batch all map to one
    // partition and no other partition shares them, so sorted locking cannot deadlock.
    for (const key of [...new Set(commands.map((c) => c.partitionKey))].sort()) {
      await outer.execute('select pg_advisory_xact_lock(hashtext(?))', [key]);
    }
    const executions: Execution[] = [];
    for (const command of commands) executions.push(await applyOne(outer, settings, command));
    return executions;
  });
}

/**
 * Applies a batch of commands of one partition in one transaction: one
 * commit and one set of partition locks for many commands. A command seen
 * before answers its first result and changes nothing. If the batch fails as
 * a whole, each command is applied on its own so only the culprit fails.
 */
export async function executeBatch(root: EntityManager, settings: Settings, commands: Command[]): Promise<{ executions: Execution[]; failures: Failure[] }> {
  try {
    return { executions: await applyBatch(root, settings, commands), failures: [] };
  } catch (error) {
    if (commands.length === 1) return { executions: [], failures: [{ command: commands[0] as Command, error: error as Error }] };
  }
  const executions: Execution[] = [];
  const failures: Failure[] = [];
  for (const command of commands) {
    const alone = await executeBatch(root, settings, [command]);
    executions.push(...alone.executions);
    failures.push(...alone.failures);
  }
  return { executions, failures };
}
