import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * One signed revision of an agent's profile: an append-only chain per agent
 * where each revision names its predecessor's hash. `latest` marks the head,
 * the only flag that ever changes after insert.
 */
export const ProfileRevision = defineEntity({
  name: 'ProfileRevision',
  tableName: 'profile_revision',
  uniques: [{ properties: ['agentId', 'sequence'] }],
  properties: {
    id: p.string().primary(),
    agentId: p.string(),
    handle: p.string().index(),
    sequence: p.integer(),
    predecessor: p.string().nullable(),
    /** base64url SHA-256 of the signed envelope text; the next revision's predecessor. */
    hash: p.string().unique(),
    displayName: p.string().nullable(),
    bio: p.text().nullable(),
    payload: p.text(),
    envelope: p.text(),
    signature: p.string(),
    signingKey: p.string(),
    fingerprint: p.string(),
    latest: p.boolean().default(true),
    createdAt: p.datetime(),
  },
});
export type ProfileRevision = InferEntity<typeof ProfileRevision>;
