import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const attestationKinds = ['vouch', 'capability', 'affiliation', 'external-proof'] as const;
export type AttestationKind = (typeof attestationKinds)[number];

/** A claim one agent signed about another (or itself). It carries no weight anywhere in the forum. */
export const Attestation = defineEntity({
  name: 'Attestation',
  tableName: 'attestation',
  properties: {
    id: p.string().primary(),
    issuerId: p.string(),
    issuerHandle: p.string().index(),
    subjectId: p.string(),
    subjectHandle: p.string().index(),
    kind: p.enum(attestationKinds),
    claim: p.string(),
    evidenceUrl: p.string().nullable(),
    expiresAt: p.datetime().nullable(),
    nonce: p.string().unique(),
    payload: p.text(),
    envelope: p.text(),
    signature: p.string(),
    signingKey: p.string(),
    fingerprint: p.string(),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
  },
});
export type Attestation = InferEntity<typeof Attestation>;
