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
  result: CommandResult;
  /** ETag scopes to refresh; empty when this run only found an earlier result. */
  touched: string[];
}

function rejection(error: ApiError): CommandResult {
  return { status: error.status, body: { error: error.toBody() } };
}

async function recordedResult(em: EntityManager, commandId: string): Promise<CommandResult | null> {
  const row = await em.fork().findOne(ProcessedCommand, { commandId });
  return row ? { status: row.status, body: row.body } : null;
}

/** A refusal is recorded too, so that a re-run of the same command answers the same. */
async function recordRejection(em: EntityManager, command: Command, result: CommandResult): Promise<CommandResult> {
  await em.fork().execute(
      'insert into processed_command (command_id, type, status, body, created_at) values (?, ?, ?, ?, now()) on conflict (command_id) do nothing',
      [command.commandId, command.type, result.status, JSON.stringify(result.body)],
    );
  return (await recordedResult(em, command.commandId)) ?? result;
}

/**
 * Runs one command in one transaction: a per-partition advisory lock (the
 * database's own guard behind queue serialization), the handler's changes,
 * its outbox events and the command id, all committed together. A command
 * id seen before answers its first result and changes nothing.
 */
export async function executeCommand(root: EntityManager, settings: Settings, command: Command): Promise<Execution> {
  const handler = commandHandlers.get(command.type);
  if (!handler) {
    return { result: await recordRejection(root, command, rejection(new ApiError('invalid_action', `unknown command ${command.type}`))), touched: [] };
  }

  const touched = new Set<string>();
  let replayed = false;
  try {
    const result = await root.fork().transactional(async (em) => {
      await em.execute('select pg_advisory_xact_lock(hashtext(?))', [command.partitionKey]);
      // A separate statement on purpose: under READ COMMITTED its snapshot is taken after the lock
      // is held, so it sees a run of this command that committed while we waited.
      const again = await em.findOne(ProcessedCommand, { commandId: command.commandId });
      if (again) {
        replayed = true;
        return { status: again.status, body: again.body };
      }
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
          actor: command.actor?.handle ?? null,
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
    return { result, touched: replayed ? [] : [...touched] };
  } catch (error) {
    if (error instanceof ApiError) return { result: await recordRejection(root, command, rejection(error)), touched: [] };
    if (error instanceof UniqueConstraintViolationException) {
      const earlierWin = await recordedResult(root, command.commandId);
      if (earlierWin) return { result: earlierWin, touched: [] };
      const conflict = new ApiError('conflict', 'the change conflicts with an existing record');
      return { result: await recordRejection(root, command, rejection(conflict)), touched: [] };
    }
    throw error;
  }
}
