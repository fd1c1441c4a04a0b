import type { EntityManager } from '@mikro-orm/postgresql';
import { LedgerEvent } from '../entities/ledgerEvent.ts';
import { OutboxEvent } from '../entities/outboxEvent.ts';
import { eventLeafHash } from './leaf.ts';

/**
 * Moves committed outbox rows into the public ledger.
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
 */

/** Ledger publication's advisory lock: the two-int4 key space, which never overlaps the bigint keys of command partitions. */
const LEDGER_LOCK = [0x4c454447, 1] as const;

/** Batch size for one reconciliation (spec Events 2: a bounded batch). */
export const PUBLISH_BATCH = 500;

/** 'skip': give up when another publisher holds the lock (it is publishing the same rows). 'wait': queue behind it. */
export type LockMode = 'skip' | 'wait';

/**
 * Publishes up to `limit` pending rows inside the caller's transaction and
 * returns how many; null when mode is 'skip' and another publisher holds the
 * lock. The lock lasts until that transaction ends.
 */
export async function publishBatch(tx: EntityManager, limit: number, mode: LockMode, now = new Date()): Promise<number | null> {
  if (mode === 'skip') {
    const [lock] = await tx.execute<{ locked: boolean }[]>('select pg_try_advisory_xact_lock(?, ?) as locked', [...LEDGER_LOCK]);
    if (!lock?.locked) return null;
  } else {
    await tx.execute('select pg_advisory_xact_lock(?, ?)', [...LEDGER_LOCK]);
  }
  const rows = await tx.find(OutboxEvent, { publishedAt: null }, { orderBy: { id: 'asc' }, limit });
  if (rows.length === 0) return 0;

  let next = BigInt(await ledgerHead(tx));
  const slugs = [...new Set(rows.flatMap((r) => (r.projectSlug ? [r.projectSlug] : [])))];
  const sizes = new Map<string, number>();
  if (slugs.length > 0) {
    const counts = await tx.execute<{ project_slug: string; size: string }[]>(
      'select project_slug, (max(leaf_index) + 1)::text as size from ledger_event where project_slug in (?) group by project_slug',
      [slugs],
    );
    for (const c of counts) sizes.set(c.project_slug, Number(c.size));
  }

  const published = rows.map((row) => {
    next += 1n;
    const event = {
      eventId: next.toString(),
      type: row.type,
      projectSlug: row.projectSlug ?? null,
      topicSlug: row.topicSlug ?? null,
      actor: row.actor ?? null,
      subjectId: row.subjectId ?? null,
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
      outboxId: row.id,
      // The leaf hashed the millisecond ISO time; store that same instant.
      createdAt: row.createdAt,
      publishedAt: now,
      leafIndex,
      leafHash: leafIndex === null ? null : Buffer.from(eventLeafHash(event)),
    };
  });
  await tx.insertMany(LedgerEvent, published);
  await tx.execute('update outbox_event set published_at = ? where id in (?)', [now, rows.map((r) => r.id)]);
  return rows.length;
}

/** One bounded reconciliation in a transaction of its own; cheap when nothing is pending. */
export async function publishPending(root: EntityManager, limit = PUBLISH_BATCH, mode: LockMode = 'skip'): Promise<number> {
  const em = root.fork();
  const pending = await em.execute('select 1 from outbox_event where published_at is null limit 1');
  if (pending.length === 0) return 0;
  return (await em.transactional((tx) => publishBatch(tx, limit, mode))) ?? 0;
}

/** Rounds a reader waits for other publishers before it queues for the lock itself. */
const READER_ROUNDS = 20;

/**
 * For event reads: returns once every outbox row committed before the call
 * is published, and tells `marks` the head. A reader publishes itself when
 * the lock is free; when a publisher holds it, the reader waits for that
 * publication to commit on the shared lock (readers never queue behind one
 * another's publications) and checks again. Rows committed before the call
 * all have ids up to the largest pending id it sees first. `dirty` is the
 * outbox mark the caller read before calling.
 */
export async function publishForReader(root: EntityManager, marks: PublicationMarks, dirty: string | null): Promise<string> {
  const em = root.fork();
  const [first] = await em.execute<{ target: string | null }[]>('select max(id)::text as target from outbox_event where published_at is null');
  const target = first?.target ?? null;
  for (let round = 0; target !== null; round++) {
    const outcome = await root.fork().transactional((tx) => publishBatch(tx, PUBLISH_BATCH, round < READER_ROUNDS ? 'skip' : 'wait'));
    const left = await em.execute('select 1 from outbox_event where published_at is null and id <= ? limit 1', [target]);
    if (left.length === 0) break;
    if (outcome === null) await root.fork().transactional((tx) => tx.execute('select pg_advisory_xact_lock_shared(?, ?)', [...LEDGER_LOCK]));
  }
  const head = await ledgerHead(em);
  // Nothing was pending at the call: the dirty mark read before it can go (unless a command set it again since).
  // Otherwise rows committed after the call may still wait, and only a publisher that drains the outbox clears it.
  await marks.published(head, target === null ? dirty : null);
  return head;
}

/** The id of the newest published event ('0' for an empty ledger). */
export async function ledgerHead(em: EntityManager): Promise<string> {
  const [row] = await em.execute<{ head: string }[]>('select coalesce(max(event_id), 0)::text as head from ledger_event');
  return row?.head ?? '0';
}

/** Where publications are announced to readers (src/store/ledgerMarks.ts); the ledger itself knows nothing of Redis. */
export interface PublicationMarks {
  read(): Promise<{ dirty: string | null; head: string | null }>;
  published(head: string, drained: string | null): Promise<void>;
}

/**
 * The background publisher's step: publishPending without waiting for the
 * lock, then tells `marks` the new head. The dirty mark is cleared only when
 * this call knows nothing committed is left: it published and took less than
 * a full batch (event reads clear it when they find nothing pending).
 */
export async function publishAndAnnounce(root: EntityManager, marks: PublicationMarks): Promise<number> {
  const { dirty, head } = await marks.read();
  const published = await publishPending(root, PUBLISH_BATCH, 'skip');
  if (published === 0 && !dirty && head !== null) return published;
  const drained = published > 0 && published < PUBLISH_BATCH;
  await marks.published(await ledgerHead(root.fork()), drained ? dirty : null);
  return published;
}
