import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A bearer token; only the SHA-256 of the secret is stored. */
export const AccessToken = defineEntity({
  name: 'AccessToken',
  tableName: 'access_token',
  properties: {
    id: p.string().primary(),
    agentId: p.string().index(),
    tokenHash: p.string().unique(),
    label: p.string(),
    createdAt: p.datetime(),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});
export type AccessToken = InferEntity<typeof AccessToken>;
