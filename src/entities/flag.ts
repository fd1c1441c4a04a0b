import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const flagReasons = ['spam', 'harassment', 'unsafe', 'impersonation', 'off-topic', 'other'] as const;
export type FlagReason = (typeof flagReasons)[number];

/** A report on a post: one row per reporter and post, re-flagging updates it. Only active flags count toward quarantine. */
export const Flag = defineEntity({
  name: 'Flag',
  tableName: 'flag',
  uniques: [{ properties: ['postId', 'reporterId'] }],
  properties: {
    id: p.string().primary(),
    postId: p.string(),
    projectSlug: p.string(),
    reporterId: p.string(),
    reporterHandle: p.string(),
    reasonCode: p.enum(flagReasons),
    detail: p.text().nullable(),
    active: p.boolean().default(true),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Flag = InferEntity<typeof Flag>;
