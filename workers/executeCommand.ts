import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from '../config/settings.ts';
import { commandHandlers } from '../src/commands/index.ts';
import type { CommandContext, CommandHandler, EventDraft } from '../src/commands/types.ts';
import { requireActor } from '../src/commands/types.ts';
import { OutboxEvent } from '../src/entities/outboxEvent.ts';
import { ProcessedCommand } from '../src/entities/processedCommand.ts';
import { ApiError } from '../src/errors.ts';
import type { Command, CommandResult } from '../src/pipeline/command.ts';
import { castVotes } from '../src/commands/batches/castVotes.ts';
import { followTargets, unfollowTargets } from '../src/commands/batches/follows.ts';
import { createPosts } from '../src/commands/batches/createPosts.ts';
import { createFlags } from '../src/commands/batches/createFlags.ts';
import type { Decision, LoadedRows, SetBasedHandler } from '../src/commands/batches/types.ts';
import { ANY_OF, insertRows, textArray, readTogether, statement, writeTogether, type Statement } from '../src/db/statements.ts';

export interface Execution {
  command: Command;
  result: CommandResult;
  /** applied: this run changed state; refused: an error result was recorded; replayed: an earlier run's result. */
  outcome: 'applied' | 'refused' | 'replayed';
  /** ETag scopes to refresh; empty when this run only found an earlier result. */
  touched: string[];
  /** Token hashes whose cached lookups die after commit (see CredentialCache). */
  expiredCredentials?: string[];
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
  return { command, result, outcome: 'refused', touched: [] };
}

/**
 * Runs the command's handler on `em` and queues its outbox events and its
 * processed_command row there: they commit with the change, or not at all.
 */
async function runHandler(em: EntityManager, settings: Settings, command: Command, handler: CommandHandler): Promise<{ result: CommandResult; touched: string[]; expiredCredentials: string[] }> {
  const touched = new Set<string>();
  const expiredCredentials: string[] = [];
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
    expireCredentials: (...hashes) => expiredCredentials.push(...hashes),
  };
  const result = await handler.handle(ctx);
  for (const event of events) {
    em.create(OutboxEvent, outboxRow(command, event, now));
  }
  em.create(ProcessedCommand, { commandId: command.commandId, type: command.type, status: result.status, body: result.body, createdAt: now });
  return { result, touched: [...touched], expiredCredentials };
}

/**
 * The database's own guard behind queue serialization. Keys of one batch all map to one
 * partition and no other partition shares them, so sorted locking cannot deadlock.
 */
async function lockPartitions(em: EntityManager, commands: Command[]): Promise<void> {
  const keys = [...new Set(commands.map((c) => c.partitionKey))].sort();
  // One statement; the subquery's order is the order the locks are taken in.
  await em.execute('select pg_advisory_xact_lock(hashtext(k)) from (select value as k from json_array_elements_text(?::json) order by 1) keys', [JSON.stringify(keys)]);
}

/**
 * Every agent row a batch may update (the commands' actors, and the authors
 * of the posts they name: post counts, votes cast, support received), locked
 * in one statement in id order before any other row. Partitions run in
 * parallel and share agents; without this, a per-command batch (which updates
 * agents in command order) or a batch of several runs could take two agents
 * in the opposite order of another partition's batch and deadlock, which
 * Postgres detects only after deadlock_timeout (1 s) and the batch is retried.
 */
async function lockAgents(em: EntityManager, commands: Command[]): Promise<void> {
  const actors = [...new Set(commands.flatMap((c) => (c.actor ? [c.actor.agentId] : [])))];
  const postIds = [...new Set(commands.flatMap((c) => (typeof c.data.postId === 'string' ? [c.data.postId] : [])))];
  await em.execute(
    `select 1 from "agent" where "id" in (
       select value from json_array_elements_text(?::json)
       union select "author_id" from "post" where "id" in (select value from json_array_elements_text(?::json))
     ) order by "id" for update`,
    [JSON.stringify(actors), JSON.stringify(postIds)],
  );
}

/** What every batch transaction takes first: its partitions, then every agent it may update. */
async function lockBatch(em: EntityManager, commands: Command[]): Promise<void> {
  await lockPartitions(em, commands);
  await lockAgents(em, commands);
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
  if (earlier) return { command, result: { status: earlier.status, body: earlier.body }, outcome: 'replayed', touched: [] };
  const handler = commandHandlers.get(command.type);
  if (!handler) return recordRejection(outer, command, new ApiError('invalid_action', `unknown command ${command.type}`));
  try {
    const { result, touched, expiredCredentials } = await outer.transactional((em) => runHandler(em, settings, command, handler));
    return { command, result, outcome: 'applied', touched, expiredCredentials };
  } catch (error) {
    if (error instanceof ApiError) return recordRejection(outer, command, error);
    if (error instanceof UniqueConstraintViolationException) return recordRejection(outer, command, new ApiError('conflict', 'the change conflicts with an existing record'));
    throw error;
  }
}

/** Each command in its own savepoint: the path that absorbs refusals. */
async function applyBatch(root: EntityManager, settings: Settings, commands: Command[]): Promise<Execution[]> {
  return root.fork().transactional(async (outer) => {
    await lockBatch(outer, commands);
    const executions: Execution[] = [];
    for (const command of commands) executions.push(await applyOne(outer, settings, command));
    return executions;
  });
}

/** Told when a batch is applied again: per command (after the set-based path), with a savepoint per command, or command by command. */
export type BatchRetryListener = (mode: 'per_command' | 'savepoints' | 'one_by_one', commands: Command[], cause: Error) => void;

/** Hot command types with a set-based path (src/commands/batches). */
const setBasedHandlers = new Map<string, SetBasedHandler>([createPosts, castVotes, followTargets, unfollowTargets, createFlags].map((h) => [h.type, h]));

function takesSetBasedPath(commands: Command[]): boolean {
  return commands.every((command) => setBasedHandlers.get(command.type)?.accepts(command) ?? false);
}

function outboxRow(command: Command, event: EventDraft, now: Date) {
  return {
    type: event.type,
    projectSlug: event.projectSlug ?? null,
    topicSlug: event.topicSlug ?? null,
    actor: event.actor === null ? null : (command.actor?.handle ?? null),
    subjectId: event.subjectId ?? null,
    data: event.data ?? {},
    commandId: command.commandId,
    createdAt: now,
    publishedAt: null,
  };
}

/** Consecutive commands of one type: a later run must see what an earlier one wrote. */
function runsOf(commands: Command[]): { handler: SetBasedHandler; commands: Command[] }[] {
  const runs: { handler: SetBasedHandler; commands: Command[] }[] = [];
  for (const command of commands) {
    const last = runs.at(-1);
    if (last && last.handler.type === command.type) last.commands.push(command);
    else runs.push({ handler: setBasedHandlers.get(command.type) as SetBasedHandler, commands: [command] });
  }
  return runs;
}

interface ProcessedRow {
  command_id: string;
  status: number;
  body: Record<string, unknown>;
}

/**
 * A batch of hot commands at a constant number of round trips, whatever its
 * size: the locks; the lookup of earlier runs together with the first run's
 * reads; a run's writes, then the next run's reads; the last writes together
 * with every outbox event and processed_command row. Refusals are decided,
 * not thrown, so they cost nothing extra; a command id seen twice in the
 * batch answers its first result. Anything unexpected throws, and the batch
 * goes the per-command way.
 */
async function applySetBased(root: EntityManager, commands: Command[]): Promise<Execution[]> {
  return root.fork().transactional(async (em) => {
    await lockBatch(em, commands);
    const now = new Date();
    // Each command once (a retry can land in the batch of its first attempt).
    const unique = [...new Map(commands.map((c) => [c.commandId, c])).values()];
    const earlier = new Map<string, CommandResult>();
    const decided = new Map<string, Decision>();
    let writes: Statement[] = [];
    for (const [index, run] of runsOf(unique).entries()) {
      let rows: LoadedRows;
      if (index === 0) {
        // After the locks, so that runs committed while we waited are seen (READ COMMITTED).
        const processed = statement(`select command_id, status, body from processed_command where command_id = ${ANY_OF}`, [textArray(unique.map((c) => c.commandId))]);
        const { processedCommands, ...loaded } = await readTogether(em, { ...run.handler.reads(run.commands, now), processedCommands: processed });
        for (const row of processedCommands as ProcessedRow[]) earlier.set(row.command_id, { status: row.status, body: row.body });
        rows = loaded;
      } else {
        await writeTogether(em, writes);
        writes = [];
        rows = await readTogether(em, run.handler.reads(run.commands, now));
      }
      const fresh = run.commands.filter((c) => !earlier.has(c.commandId));
      if (fresh.length === 0) continue;
      const fold = run.handler.decide(em, fresh, rows, now);
      for (const decision of fold.decisions) decided.set(decision.command.commandId, decision);
      writes.push(...fold.writes);
    }
    const outbox = [...decided.values()].flatMap((d) => d.events.map((event) => outboxRow(d.command, event, now)));
    if (outbox.length > 0) writes.push(insertRows(em, OutboxEvent, outbox));
    const processed = [...decided.values()].map((d) => ({ commandId: d.command.commandId, type: d.command.type, status: d.result.status, body: d.result.body, createdAt: now }));
    if (processed.length > 0) writes.push(insertRows(em, ProcessedCommand, processed));
    await writeTogether(em, writes);
    const answered = new Set<string>();
    return commands.map((command): Execution => {
      const first = !answered.has(command.commandId);
      answered.add(command.commandId);
      const decision = decided.get(command.commandId);
      if (decision && first) return { command, result: decision.result, outcome: decision.outcome, touched: decision.touched };
      const result = decision?.result ?? (earlier.get(command.commandId) as CommandResult);
      return { command, result, outcome: 'replayed', touched: [] };
    });
  });
}

/** Thrown inside the optimistic path to give the batch back to the savepoint path. */
class NeedsSavepoints extends Error {}

/**
 * The common case, where every command succeeds: one shared unit of work,
 * one lookup of earlier runs for the whole batch, no savepoints, and inserts
 * of one table grouped at flush. Any refusal or conflict rolls the whole
 * transaction back and the batch runs again through applyBatch.
 */
async function applyOptimistically(root: EntityManager, settings: Settings, commands: Command[]): Promise<Execution[]> {
  return root.fork().transactional(async (em) => {
    await lockBatch(em, commands);
    // After the locks, so that runs committed while we waited are seen (READ COMMITTED).
    const earlier = new Map((await em.find(ProcessedCommand, { commandId: { $in: commands.map((c) => c.commandId) } })).map((row) => [row.commandId, row]));
    const executions: Execution[] = [];
    for (const command of commands) {
      const seen = earlier.get(command.commandId);
      if (seen) {
        executions.push({ command, result: { status: seen.status, body: seen.body }, outcome: 'replayed', touched: [] });
        continue;
      }
      const handler = commandHandlers.get(command.type);
      if (!handler) throw new NeedsSavepoints('unknown command');
      try {
        executions.push({ command, outcome: 'applied', ...(await runHandler(em, settings, command, handler)) });
      } catch (error) {
        if (error instanceof ApiError || error instanceof UniqueConstraintViolationException) throw new NeedsSavepoints('refusal');
        throw error;
      }
    }
    return executions;
  });
}

/**
 * Applies a batch of commands of one partition in one transaction: one
 * commit and one set of partition locks for many commands. First optimistically
 * (no savepoints); if any command is refused, again with a savepoint per
 * command; if the batch fails as a whole, each command on its own so only the
 * culprit fails. A command seen before answers its first result and changes nothing.
 */
export async function executeBatch(
  root: EntityManager,
  settings: Settings,
  commands: Command[],
  onRetry: BatchRetryListener = () => {},
): Promise<{ executions: Execution[]; failures: Failure[] }> {
  if (takesSetBasedPath(commands)) {
    try {
      return { executions: await applySetBased(root, commands), failures: [] };
    } catch (error) {
      onRetry('per_command', commands, error as Error);
    }
  }
  try {
    return { executions: await applyOptimistically(root, settings, commands), failures: [] };
  } catch (error) {
    // A refusal, a conflict (also one found only at commit) or a failure: nothing was committed.
    onRetry('savepoints', commands, error as Error);
  }
  try {
    return { executions: await applyBatch(root, settings, commands), failures: [] };
  } catch (error) {
    if (commands.length === 1) return { executions: [], failures: [{ command: commands[0] as Command, error: error as Error }] };
    onRetry('one_by_one', commands, error as Error);
  }
  const executions: Execution[] = [];
  const failures: Failure[] = [];
  for (const command of commands) {
    const alone = await executeBatch(root, settings, [command], onRetry);
    executions.push(...alone.executions);
    failures.push(...alone.failures);
  }
  return { executions, failures };
}
