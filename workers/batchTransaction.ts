import type { EntityManager } from '@mikro-orm/postgresql';
import { run } from '../src/db/postgres.ts';
import { ANY_OF, distinct, statement, type Statement } from '../src/db/statements.ts';
import type { EventDraft } from '../src/commands/types.ts';
import type { Command, CommandResult } from '../src/pipeline/command.ts';
import type { Recorded } from '../src/pipeline/results.ts';
import { failpoint } from '../src/failpoints.ts';
import type { Publication } from '../src/ledger/publication.ts';

// What every path of a batch transaction shares: the result record, the locks taken first, the outbox row.

/** One command's outcome in a batch, and what the worker refreshes for it after commit. */
export interface Execution {
  command: Command;
  result: CommandResult;
  /** applied: this run changed state; refused: an error result was recorded; replayed: an earlier run's result. */
  outcome: 'applied' | 'refused' | 'replayed';
  /** ETag scopes to refresh (a replay's are its first run's: src/pipeline/results.ts Refreshes). */
  touched: string[];
  /** Token hashes whose cached lookups die after commit (see CredentialCache). */
  expiredCredentials?: string[];
}

/** A command found already recorded: its first run's result, and what that run's commit refreshes, refreshed again. */
export function replayed(command: Command, recorded: Recorded): Execution {
  const { touched, expiredCredentials } = recorded.refreshes;
  return { command, result: recorded.result, outcome: 'replayed', touched, expiredCredentials };
}

/**
 * A batch's outcome: every command's, and the ledger publication that
 * committed with it (the set-based path publishes its own events; the
 * per-command paths leave them to the ledger publisher: null).
 */
export interface Applied {
  executions: Execution[];
  publication: Publication | null;
}

/**
 * The database's own guard behind queue serialization. Keys of one batch all map to one
 * partition and no other partition shares them, so sorted locking cannot deadlock.
 * One statement; the subquery's order is the order the locks are taken in.
 */
function lockPartitionsStatement(commands: Command[]): Statement {
  const keys = [...new Set(commands.map((c) => c.partitionKey))].sort();
  return statement('select pg_advisory_xact_lock(hashtext(k)) from (select k from unnest(?::text[]) as k order by 1) keys', [
    distinct(keys),
  ]);
}

/**
 * Every agent row a batch may update (the commands' actors, and the authors
 * of the posts they name: post counts, votes cast, support received), locked
 * in one statement in id order before any other row. Partitions run in
 * parallel and share agents; without this, a per-command batch (which updates
 * agents in command order) or a batch of several runs could take two agents
 * in the opposite order of another partition's batch and deadlock, which
 * Postgres detects only after deadlock_timeout (1 s) and the batch is retried.
 * NO KEY UPDATE, the lock the counter updates take anyway: it leaves other
 * transactions' foreign-key checks (KEY SHARE) free, so a transaction that
 * inserts a row naming a locked agent and holds the ledger lock at its
 * commit (checkpoint prepare) does not wait for a batch that waits for it.
 * (A key rotation's update of public_key, a unique column, still takes FOR
 * UPDATE; a batch mixing one with checkpoint prepare could still deadlock,
 * which Postgres breaks and the batch retries.)
 */
function lockAgentsStatement(commands: Command[]): Statement {
  const actors = [...new Set(commands.flatMap((c) => (c.actor ? [c.actor.agentId] : [])))];
  const postIds = [...new Set(commands.flatMap((c) => (typeof c.data.postId === 'string' ? [c.data.postId] : [])))];
  return statement(
    // A union rather than OR: the planner probes the agents it names instead of filtering every agent.
    'select 1 from "agent" where "id" in (select unnest(?::text[]) union select "author_id" from "post" where "id" = ' +
      `${ANY_OF}) order by "id" for no key update`,
    [distinct(actors), distinct(postIds)],
  );
}

/** What every batch transaction takes first, in this order: its partitions, then every agent it may update. */
export function lockBatchStatements(commands: Command[]): Statement[] {
  return [lockPartitionsStatement(commands), lockAgentsStatement(commands)];
}

/**
 * The statements of lockBatchStatements on the unit of work's transaction, one round trip each; then
 * the failpoint that fault tests use to stop a batch mid-transaction.
 */
export async function lockBatch(em: EntityManager, commands: Command[]): Promise<void> {
  for (const lock of lockBatchStatements(commands)) await run(em, lock);
  failpoint('batch-mid-transaction');
}

export function outboxRow(command: Command, event: EventDraft, now: Date) {
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
