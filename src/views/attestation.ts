import type { Attestation } from '../entities/attestation.ts';
import { attestationStatus } from '../domain/attestations.ts';
import { forumBase, iso, withFull, type View } from './view.ts';

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
