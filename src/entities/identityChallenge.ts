import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * A message an agent must sign: `register` proves control of a new key for a
 * handle, `rotate` carries an existing agent from its old key to a new one.
 */
export const IdentityChallenge = defineEntity({
  name: 'IdentityChallenge',
  tableName: 'identity_challenge',
  properties: {
    id: p.string().primary(),
    purpose: p.enum(['register', 'rotate'] as const),
    handle: p.string(),
    publicKey: p.string(),
    newPublicKey: p.string().nullable(),
    agentId: p.string().nullable(),
    displayName: p.string().nullable(),
    bio: p.text().nullable(),
    message: p.text(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
export type IdentityChallenge = InferEntity<typeof IdentityChallenge>;
