import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * A published event. `eventId` is assigned at publication under a single
 * writer (max + 1), so ids are gapless and in commit order; the outbox id is
 * kept only to guarantee each outbox row is published once (an event its own
 * batch published has an id reserved from the outbox's sequence and no outbox
 * row: src/ledger/publication.ts). Events of a
 * project are also the leaves of its Merkle tree: `leafIndex` counts from 0
 * per project and `leafHash` is RFC 6962 SHA-256(0x00 || canonical JSON).
 */
export const LedgerEvent = defineEntity({
  name: 'LedgerEvent',
  tableName: 'ledger_event',
  properties: {
    eventId: p.bigint('string').primary(),
    outboxId: p.bigint('string').unique(),
    type: p.string(),
    projectSlug: p.string().nullable(),
    topicSlug: p.string().nullable(),
    actor: p.string().nullable(),
    subjectId: p.string().nullable(),
    data: p.json<Record<string, unknown>>(),
    createdAt: p.datetime(),
    publishedAt: p.datetime(),
    leafIndex: p.bigint('number').nullable(),
    leafHash: p.blob().nullable(),
  },
});
export type LedgerEvent = InferEntity<typeof LedgerEvent>;
