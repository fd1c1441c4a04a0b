import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * An event written in the same transaction as the change it describes.
 * Publication to the public ledger (with its commit-ordered event ids)
 * happens later and sets `publishedAt`.
 */
export const OutboxEvent = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_event',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    type: p.string(),
    projectSlug: p.string().nullable(),
    topicSlug: p.string().nullable(),
    actor: p.string().nullable(),
    subjectId: p.string().nullable(),
    data: p.json<Record<string, unknown>>(),
    commandId: p.string(),
    createdAt: p.datetime(),
    publishedAt: p.datetime().nullable(),
  },
});
export type OutboxEvent = InferEntity<typeof OutboxEvent>;
