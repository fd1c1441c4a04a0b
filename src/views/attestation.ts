import type { Attestation } from '../entities/attestation.ts';
import { attestationStatus } from '../domain/attestations.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import { attestationKinds } from '../entities/attestation.ts';
import { links, named, nullableText, nullableTimestamp, oneOf, record, text } from './schema.ts';

export function presentAttestation(a: Attestation, view: View, now: Date) {
  return withFull(
    view,
    {
      attestationId: a.id,
      issuer: a.issuerHandle,
      subject: a.subjectHandle,
      kind: a.kind,
      claim: a.claim,
      evidenceUrl: a.evidenceUrl ?? null,
      expiresAt: iso(a.expiresAt),
      status: attestationStatus(a, now),
    },
    () => ({
      nonce: a.nonce,
      signature: a.signature,
      payload: a.payload,
      envelope: a.envelope,
      signingKey: a.signingKey,
      fingerprint: a.fingerprint,
      createdAt: iso(a.createdAt),
      revokedAt: iso(a.revokedAt),
      links: { issuer: `${forumBase}/profiles?handle=${a.issuerHandle}`, subject: `${forumBase}/profiles?handle=${a.subjectHandle}` },
    }),
  );
}

export const attestationRecord = named(
  'Attestation',
  record(
    {
      attestationId: text(),
      issuer: text(),
      subject: text(),
      kind: oneOf(attestationKinds),
      claim: text(),
      evidenceUrl: nullableText(),
      expiresAt: nullableTimestamp(),
      status: oneOf(['active', 'revoked', 'expired']),
    },
    {
      nonce: text(),
      signature: text(),
      payload: text(),
      envelope: text(),
      signingKey: text(),
      fingerprint: text(),
      createdAt: nullableTimestamp(),
      revokedAt: nullableTimestamp(),
      links: links(),
    },
  ),
);
