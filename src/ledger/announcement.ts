import type { LedgerEvent } from '../entities/ledgerEvent.ts';

/**
 * What a publisher announces after a publication commits: the new ledger
 * head, and with it the published events themselves, so that an API
 * process fans them out without reading them back from Postgres (that read
 * was a round trip and a query per announcement in every API process, and
 * most of the delay between a publication and its streams). A publication
 * too big to announce whole announces only its head: the fan-out then reads
 * the range, as it does whenever an announcement was lost or skipped.
 *
 * Wire form: `<head>` alone, or `<head> <JSON array of events>`, each event
 * an array in the order of `Wire` (positional: an announcement is read by
 * every API process, so it is kept small).
 */

/** Announcements above this carry only the head (Redis pub/sub copies each message to every subscriber and, in a cluster, every node). */
export const ANNOUNCED_BYTES_MAX = 256 * 1024;

type Wire = [
  eventId: string,
  type: string,
  projectSlug: string | null,
  topicSlug: string | null,
  actor: string | null,
  subjectId: string | null,
  createdAt: string,
  publishedAt: string,
  leafIndex: number | null,
  leafHash: string | null,
  outboxId: string,
  data: Record<string, unknown>,
];

export interface Announcement {
  head: bigint;
  /** The events up to the head, in id order, when the publisher sent them (always the head's own publication: ids head - n + 1 .. head). */
  events: LedgerEvent[] | null;
}

function toWire(event: LedgerEvent): Wire {
  return [
    event.eventId,
    event.type,
    event.projectSlug ?? null,
    event.topicSlug ?? null,
    event.actor ?? null,
    event.subjectId ?? null,
    event.createdAt.toISOString(),
    event.publishedAt.toISOString(),
    event.leafIndex ?? null,
    event.leafHash ? Buffer.from(event.leafHash).toString('hex') : null,
    event.outboxId,
    event.data,
  ];
}

function fromWire([
  eventId,
  type,
  projectSlug,
  topicSlug,
  actor,
  subjectId,
  createdAt,
  publishedAt,
  leafIndex,
  leafHash,
  outboxId,
  data,
]: Wire): LedgerEvent {
  return {
    eventId,
    type,
    projectSlug,
    topicSlug,
    actor,
    subjectId,
    createdAt: new Date(createdAt),
    publishedAt: new Date(publishedAt),
    leafIndex,
    leafHash: leafHash === null ? null : Buffer.from(leafHash, 'hex'),
    outboxId,
    data,
  };
}

/** The events of `events` (in id order) that run without a gap up to `head`: the only ones an announcement can carry. */
function runUpTo(head: string, events: readonly LedgerEvent[]): readonly LedgerEvent[] {
  let start = events.length;
  let next = BigInt(head);
  while (start > 0 && BigInt(events[start - 1]!.eventId) === next) {
    start--;
    next--;
  }
  return events.slice(start);
}

/** The announcement of the head `head`, with those of `events` (in id order) that lead up to it when they fit. */
export function encodeAnnouncement(head: string, events: readonly LedgerEvent[] = []): string {
  const run = runUpTo(head, events);
  if (run.length === 0) return head;
  const message = `${head} ${JSON.stringify(run.map(toWire))}`;
  return message.length <= ANNOUNCED_BYTES_MAX ? message : head;
}

/** The announcement without its events: the head alone, as announced when the events do not fit. */
export function headOf(message: string): string {
  const space = message.indexOf(' ');
  return space < 0 ? message : message.slice(0, space);
}

/** Null for anything that is not an announcement (the channel is open to any Redis client): it is ignored. */
export function decodeAnnouncement(message: string): Announcement | null {
  const space = message.indexOf(' ');
  const head = space < 0 ? message : message.slice(0, space);
  if (!/^[0-9]{1,19}$/.test(head)) return null;
  if (space < 0) return { head: BigInt(head), events: null };
  try {
    const wire = JSON.parse(message.slice(space + 1)) as Wire[];
    const events = wire.map(fromWire);
    // Only a gapless run ending at the head is taken; anything else is read from Postgres like a lost announcement.
    const gapless = events.length > 0 && runUpTo(head, events).length === events.length;
    return { head: BigInt(head), events: gapless ? events : null };
  } catch {
    return { head: BigInt(head), events: null };
  }
}
