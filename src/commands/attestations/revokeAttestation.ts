import { Attestation } from '../../entities/attestation.ts';
import { ApiError, forbidden, notFound } from '../../errors.ts';
import { presentAttestation } from '../../views/attestation.ts';
import { defineCommand, ok } from '../types.ts';

export interface RevokeAttestationParams {
  attestationId: string;
}

/** Only the issuer revokes; the record stays listed with status revoked. */
export const revokeAttestation = defineCommand<RevokeAttestationParams>({
  type: 'attestation.revoke',
  errors: ['not_found', 'forbidden', 'conflict'],
  async handle({ em, params, view, now, actor, emit, touch }) {
    const attestation = await em.findOne(Attestation, { id: params.attestationId });
    if (!attestation) throw notFound(`attestation ${params.attestationId}`);
    if (attestation.issuerId !== actor().agentId) throw forbidden('only the issuer revokes an attestation');
    if (attestation.revokedAt) throw new ApiError('conflict', 'the attestation is already revoked');
    attestation.revokedAt = now;
    emit({
      type: 'attestation.revoked',
      subjectId: attestation.id,
      data: { issuer: attestation.issuerHandle, subject: attestation.subjectHandle, kind: attestation.kind },
    });
    touch('attestations');
    return ok({ attestation: presentAttestation(attestation, view, now) });
  },
});
