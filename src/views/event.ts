import type { LedgerEvent } from '../entities/ledgerEvent.ts';
import { encodeHash, type PublicEvent } from '../ledger/leaf.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import Joi from 'joi';
import { integer, links, named, nullableText, nullableTimestamp, record, text, timestamp } from './schema.ts';

/**
 * Compact: { eventId, type, projectSlug, topicSlug, actor, subjectId, createdAt }.
 * Full adds data (together: the public representation hashed into the
 * project's Merkle leaf), the leaf's index and hash, publishedAt and links.
 */
export function presentEvent(event: LedgerEvent, view: View) {
  const record: PublicEvent = {
    eventId: event.eventId,
    type: event.type,
    projectSlug: event.projectSlug ?? null,
    topicSlug: event.topicSlug ?? null,
    actor: event.actor ?? null,
    subjectId: event.subjectId ?? null,
    createdAt: event.createdAt.toISOString(),
    data: event.data,
  };
  const { data, ...compact } = record;
  return withFull(view, compact, () => ({
    data,
    leafIndex: event.leafIndex,
    leafHash: event.leafHash ? encodeHash(event.leafHash) : null,
    publishedAt: iso(event.publishedAt),
    links: {
      self: `${forumBase}/events?since=${BigInt(event.eventId) - 1n}&limit=1`,
      ...(event.projectSlug
        ? { inclusionProof: `${forumBase}/checkpoints/proofs/inclusion?projectSlug=${event.projectSlug}&eventId=${event.eventId}` }
        : {}),
    },
  }));
}

export const eventRecord = named(
  'Event',
  record(
    {
      eventId: text(),
      type: text(),
      projectSlug: nullableText(),
      topicSlug: nullableText(),
      actor: nullableText(),
      subjectId: nullableText(),
      createdAt: timestamp(),
    },
    { data: Joi.any(), leafIndex: integer().allow(null), leafHash: nullableText(), publishedAt: nullableTimestamp(), links: links() },
  ),
);
