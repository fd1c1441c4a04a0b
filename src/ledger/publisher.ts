import type { EntityManager } from '@mikro-orm/postgresql';
import type { LedgerEvent } from '../entities/ledgerEvent.ts';
import { run, transaction } from '../db/postgres.ts';
import { statement } from '../db/statements.ts';
import { claimInTrip, LEDGER_LOCK, PUBLISH_BATCH, type LockMode, type Publication } from './publication.ts';

/**
 * The loops that run publications (publication.ts): in a transaction of
 * their own, for the background publisher, for event reads that must see
 * every committed row, and the announcement of what they published.
 */

/**
 * publishBatch in a transaction of its own, in two round trips: begin, the
 * lock and the claim; then the writes and commit. The background publisher
 * and event reads publish this way; a set-based batch publishes inside its
 * own transaction (workers/applySetBased.ts).
 */
export async function publishAlone(root: EntityManager, limit: number, mode: LockMode, now = new Date()): Promise<Publication | null> {
  const claim = claimInTrip(limit, mode);
  return transaction(root, async (trips) => {
    const claimed = claim.decide(root, await trips.send(claim.statements), now);
    return claimed ? { commit: claimed.writes, result: claimed.publication } : { rollback: true, result: null };
  });
}

/**
 * One bounded reconciliation in a transaction of its own; cheap when nothing
 * is pending: then one statement, and a publication of nothing at the
 * ledger's head. Null: another publisher holds the lock.
 */
export async function publishPending(root: EntityManager, limit = PUBLISH_BATCH, mode: LockMode = 'skip'): Promise<Publication | null> {
  const [state] = await run<{ pending: boolean; head: string }>(
    root.fork(),
    statement(
      'select exists (select 1 from outbox_event where published_at is null) as pending, (select coalesce(max(event_id), 0) from ledger_event)::text as head',
    ),
  );
  if (!state?.pending) return { count: 0, head: state?.head ?? '0', events: [] };
  return publishAlone(root, limit, mode);
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
  const [first] = await run<{ target: string | null; head: string }>(
    em,
    statement(
      'select (select max(id) from outbox_event where published_at is null)::text as target, (select ' +
        'coalesce(max(event_id), 0) from ledger_event)::text as head',
    ),
  );
  const target = first?.target ?? null;
  let head = first?.head ?? '0';
  // What this reader published itself, announced with the head (a run with gaps is announced as the head alone).
  const events: LedgerEvent[] = [];
  for (let round = 0; target !== null; round++) {
    const outcome = await publishAlone(root, PUBLISH_BATCH, round < READER_ROUNDS ? 'skip' : 'wait');
    if (outcome) events.push(...outcome.events);
    // Our own publication saw every row pending at the call (they were committed then) and took all it found.
    if (outcome && outcome.count < PUBLISH_BATCH) {
      head = outcome.head;
      break;
    }
    const left = await run(em, statement('select 1 from outbox_event where published_at is null and id <= ? limit 1', [target]));
    if (left.length === 0) {
      head = await ledgerHead(em);
      break;
    }
    if (outcome === null)
      await transaction(root, async () => ({
        commit: [statement('select pg_advisory_xact_lock_shared(?, ?)', [...LEDGER_LOCK])],
        result: null,
      }));
  }
  // Nothing was pending at the call: the dirty mark read before it can go (unless a command set it again since).
  // Otherwise rows committed after the call may still wait, and only a publisher that drains the outbox clears it.
  await marks.published(head, target === null ? dirty : null, events);
  return head;
}

/** The id of the newest published event ('0' for an empty ledger). */
export async function ledgerHead(em: EntityManager): Promise<string> {
  const [row] = await run<{ head: string }>(em, statement('select coalesce(max(event_id), 0)::text as head from ledger_event'));
  return row?.head ?? '0';
}

/** The outbox's dirty mark and the announced head, as read at some moment. */
export interface MarksState {
  dirty: string | null;
  head: string | null;
}

/** Where publications are announced to readers (src/store/ledgerMarks.ts); the ledger itself knows nothing of Redis. */
export interface PublicationMarks {
  read(): Promise<MarksState>;
  /** `events`: the publication that raised the head to `head`, announced with it so event streams need not read it back. Returns the marks after it. */
  published(head: string, drained: string | null, events?: readonly LedgerEvent[]): Promise<MarksState>;
}

/**
 * A publisher round's outcome: rows published, the marks as its announcement
 * left them (null: it announced nothing), and, when it found the ledger's
 * head above the announced one and left it, both heads (null otherwise).
 */
export interface Round {
  published: number;
  marks: MarksState | null;
  behind: { ledger: string; announced: string } | null;
}

/**
 * The background publisher's step: publishPending without waiting for the
 * lock, then tells `marks` the new head. The dirty mark is cleared only when
 * this call knows nothing committed is left: it published and took less than
 * a full batch (event reads clear it when they find nothing pending).
 * `committed`: a command has just committed outbox rows (the publisher was
 * nudged), so the check for pending rows is skipped: a round trip fewer
 * between a commit and its events' publication. `seen`: the marks as the
 * previous round's announcement left them, which serve as this round's when
 * nudged (another round trip fewer); otherwise they are read. Either way they
 * are read before the transaction: a mark set after that read is never
 * cleared by this round (it could belong to rows this round does not see),
 * and nothing waits on Redis while the ledger's lock is held.
 *
 * A ledger head above the announced one with nothing pending is a batch
 * that published its own events and has not announced them: usually it is
 * about to (a few milliseconds after its commit, with the events, which
 * spares every event stream a read), so the round leaves it and reports it,
 * whether or not the outbox is marked dirty meanwhile (the next batch may
 * have marked it already).
 * `overdue`: such a head a round found a while ago; if the announced head is
 * still below it, that batch died before announcing, and this round
 * announces the ledger's head in its place.
 */
export async function publishAndAnnounce(
  root: EntityManager,
  marks: PublicationMarks,
  options: { committed?: boolean; seen?: MarksState | null; overdue?: string | null } = {},
): Promise<Round> {
  const { committed = false, seen = null, overdue = null } = options;
  const { dirty, head } = committed && seen ? seen : await marks.read();
  const publication = committed ? await publishAlone(root, PUBLISH_BATCH, 'skip') : await publishPending(root, PUBLISH_BATCH, 'skip');
  const published = publication?.count ?? 0;
  const behind =
    publication !== null && head !== null && BigInt(publication.head) > BigInt(head) ? { ledger: publication.head, announced: head } : null;
  const late = behind !== null && overdue !== null && BigInt(behind.announced) < BigInt(overdue);
  // With nothing published, a head above the announced one is left to its batch (until overdue) even while the outbox
  // is marked dirty: announcing it here would announce it without its events, which every stream would then read back.
  if (published === 0 && head !== null && !late && (!dirty || behind !== null)) return { published, marks: null, behind };
  const drained = published > 0 && published < PUBLISH_BATCH;
  return {
    published,
    marks: await marks.published(publication?.head ?? (await ledgerHead(root.fork())), drained ? dirty : null, publication?.events),
    behind: null,
  };
}
