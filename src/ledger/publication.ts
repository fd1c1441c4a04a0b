import type { EntityManager } from '@mikro-orm/postgresql';
import { LedgerEvent } from '../entities/ledgerEvent.ts';
import { run, type Row } from '../db/postgres.ts';
import { combinedWrite, insertRows, statement, writeTogether, type Statement } from '../db/statements.ts';
import { eventLeafHash } from './leaf.ts';
import { sizesAndEdges, treeWrites } from './treeWrites.ts';

/**
 * One publication: what it claims and what it writes (the loops that run
 * publications are in publisher.ts).
 *
 * Outbox ids come from a sequence, i.e. in transaction start order, so a row
 * with a smaller id can commit after a larger one: handing out outbox ids
 * would let a reader that polls `id > since` skip the late row for good.
 * Instead one publisher at a time (a transaction-scoped advisory lock) takes
 * what is committed now, in outbox id order, and assigns ledger ids max + 1,
 * max + 2, ... in the same transaction that marks the outbox rows published.
 * The lock is held until commit, so the next publisher reads the new max:
 * ledger ids are gapless and commit-ordered, and everything a reader sees
 * with id <= N was committed before anything with id > N.
 *
 * A batch of hot commands publishes its own events in its transaction, after
 * the rows it claims: straight into the ledger, under outbox ids it reserves
 * from the outbox's sequence (the ledger's outbox_id stays unique whichever
 * way an event came). They never wait, so they get no outbox row: the outbox
 * holds only what a publisher reconciles, not a second copy of every event.
 */

/** Ledger publication's advisory lock: the two-int4 key space, which never overlaps the bigint keys of command partitions. */
export const LEDGER_LOCK = [0x4c454447, 1] as const;

/** Batch size for one reconciliation (spec Events 2: a bounded batch). */
export const PUBLISH_BATCH = 500;

/** 'skip': give up when another publisher holds the lock (it is publishing the same rows). 'wait': queue behind it. */
export type LockMode = 'skip' | 'wait';

/** An event of the publishing transaction itself, as an outbox row would hold it (workers/batchTransaction.ts outboxRow). */
export interface OwnEvent {
  type: string;
  projectSlug: string | null;
  topicSlug: string | null;
  actor: string | null;
  subjectId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
}

interface PendingRow {
  id: string;
  type: string;
  project_slug: string | null;
  topic_slug: string | null;
  actor: string | null;
  subject_id: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

/** What one publication did: how many rows it published, the ledger head after it, and the events it published (in id order). */
export interface Publication {
  count: number;
  head: string;
  events: LedgerEvent[];
}

function lockStatement(mode: LockMode): Statement {
  return mode === 'skip'
    ? statement('select pg_try_advisory_xact_lock(?, ?) as locked', [...LEDGER_LOCK])
    : statement('select true as locked from pg_advisory_xact_lock(?, ?)', [...LEDGER_LOCK]);
}

/**
 * What a publication reads, after the lock and in a statement of its own:
 * under READ COMMITTED it then sees the previous publisher's commit. The
 * pending rows are read only by the lock's holder (taking a lock already
 * held is instant and true): sent in one message with a try-lock that
 * failed, the read costs nothing. `own`: the publishing transaction's own
 * events, whose projects' sizes and tree edges are read with the claimed
 * rows', and for which as many outbox ids are reserved. One statement, so
 * that the claimed rows and each project's size are read once.
 */
function claimRead(limit: number, own: readonly OwnEvent[]): Statement {
  return statement(
    `with claimed as materialized (
       select * from outbox_event where published_at is null and (select pg_try_advisory_xact_lock(?, ?)) order by id limit ?),
     leaves as (
       select project_slug from claimed where project_slug is not null
       union all select s from unnest(?::text[]) s where s is not null),
     ${sizesAndEdges}
     select
       coalesce((select json_agg(o) from (
         select c.id::text as id, c.type, c.project_slug, c.topic_slug, c.actor, c.subject_id, c.data, c.created_at
           from claimed c order by c.id) o), '[]'::json) as pending,
       coalesce((select json_agg(s) from (select project_slug, size from sizes) s), '[]'::json) as sizes,
       (select coalesce(max(event_id), 0)::text from ledger_event) as head,
       coalesce((select json_agg(e) from edges e), '[]'::json) as edges,
       -- None when the publication has no events of its own (generate_series(1, 0) is empty).
       coalesce((select json_agg(nextval(pg_get_serial_sequence('outbox_event', 'id'))::text) from generate_series(1, ?)), '[]'::json) as reserved`,
    [...LEDGER_LOCK, limit, own.map((event) => event.projectSlug), own.length],
  );
}

/** claimRead's one row. */
interface Claimed {
  pending: PendingRow[];
  sizes: { project_slug: string; size: number }[];
  head: string;
  edges: unknown[];
  reserved: string[];
}

/** An event to publish, claimed or the transaction's own, with its outbox id. */
interface Publishable extends OwnEvent {
  outboxId: string;
}

const fromPending = (row: PendingRow): Publishable => ({
  outboxId: row.id,
  type: row.type,
  projectSlug: row.project_slug,
  topicSlug: row.topic_slug,
  actor: row.actor,
  subjectId: row.subject_id,
  data: row.data,
  createdAt: new Date(row.created_at),
});

/** The publication of the claimed rows, then of `own`: ledger ids after the head, each project's leaves after its size, and the writes that record it. */
function decide(em: EntityManager, read: Claimed, own: readonly OwnEvent[], now: Date): { publication: Publication; writes: Statement[] } {
  const claimed = read.pending.map(fromPending);
  const owned = own.map((event, i): Publishable => ({ ...event, outboxId: read.reserved[i] as string }));
  const rows: Publishable[] = [...claimed, ...owned];
  let next = BigInt(read.head);
  if (rows.length === 0) return { publication: { count: 0, head: next.toString(), events: [] }, writes: [] };

  const sizes = new Map(read.sizes.map((row) => [row.project_slug, Number(row.size)]));
  const published = rows.map((row): LedgerEvent => {
    next += 1n;
    const event = {
      eventId: next.toString(),
      type: row.type,
      projectSlug: row.projectSlug,
      topicSlug: row.topicSlug,
      actor: row.actor,
      subjectId: row.subjectId,
      createdAt: row.createdAt.toISOString(),
      data: row.data,
    };
    let leafIndex: number | null = null;
    if (event.projectSlug) {
      leafIndex = sizes.get(event.projectSlug) ?? 0;
      sizes.set(event.projectSlug, leafIndex + 1);
    }
    return {
      ...event,
      outboxId: row.outboxId,
      // The leaf hashed the millisecond ISO time; store that same instant.
      createdAt: row.createdAt,
      publishedAt: now,
      leafIndex,
      leafHash: leafIndex === null ? null : Buffer.from(eventLeafHash(event)),
    };
  });
  return {
    publication: { count: rows.length, head: next.toString(), events: published },
    writes: [
      insertRows(em, LedgerEvent, published),
      ...(claimed.length > 0
        ? [statement('update outbox_event set published_at = ? where id = any(?::bigint[])', [now, claimed.map((r) => r.outboxId)])]
        : []),
      ...treeWrites(
        published.flatMap((e) =>
          e.projectSlug && e.leafHash ? [{ projectSlug: e.projectSlug, leafIndex: e.leafIndex as number, leafHash: e.leafHash }] : [],
        ),
        read.edges,
      ),
    ],
  };
}

/**
 * Publishes up to `limit` pending rows inside the caller's transaction; null
 * when mode is 'skip' and another publisher holds the lock. The lock lasts
 * until that transaction ends. Three round trips whatever the batch size:
 * the lock; the pending rows with the ledger head, each project's size and
 * the tree entries they complete; the ledger rows, the outbox marks and the
 * new tree entries in one statement.
 */
export async function publishBatch(tx: EntityManager, limit: number, mode: LockMode, now = new Date()): Promise<Publication | null> {
  const [locked] = await run<{ locked: boolean }>(tx, lockStatement(mode));
  if (!locked?.locked) return null;
  const [claimed] = await run<Claimed>(tx, claimRead(limit, []));
  const { publication, writes } = decide(tx, claimed as Claimed, [], now);
  await writeTogether(tx, writes);
  return publication;
}

/**
 * A publication inside a transaction sent in few trips (src/db/postgres.ts):
 * `statements` take the lock and claim the pending rows, at the end of one
 * trip; `decide` reads that trip's last two results and gives the writes for
 * a later trip (the commit's) as one statement (none when nothing was
 * published), or null when mode is 'skip' and another publisher holds the
 * lock. `own`: the transaction's own events, published after the claimed
 * rows (ledger rows only: see the top of this file).
 */
export function claimInTrip(limit: number, mode: LockMode, own: readonly OwnEvent[] = []) {
  const read = claimRead(limit, own);
  return {
    statements: [lockStatement(mode), read],
    decide(em: EntityManager, results: Row[][], now: Date): { publication: Publication; writes: Statement[] } | null {
      const [lockRows, claimRows] = results.slice(-2);
      if (!lockRows?.[0]?.locked) return null;
      const { publication, writes } = decide(em, claimRows?.[0] as unknown as Claimed, own, now);
      return { publication, writes: writes.length > 0 ? [combinedWrite(writes)] : [] };
    },
  };
}
