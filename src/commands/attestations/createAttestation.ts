import { Attestation } from '../../entities/attestation.ts';
import { ApiError } from '../../errors.ts';
import { attestationExpiry } from '../../domain/attestations.ts';
import type { SignedSubmission } from '../../crypto/signedAction.ts';
import { newId } from '../../ids.ts';
import { presentAttestation } from '../../views/attestation.ts';
import type { View } from '../../views/view.ts';
import { agentById } from '../lookups.ts';
import { acceptSignedAction, bindingMismatch } from '../signing.ts';
import { defineCommand, ok } from '../types.ts';
import { ATTESTATION_ACTION, attestationPayloadSchema } from './attestationPayload.ts';

export interface CreateAttestationParams extends SignedSubmission {
  nonce?: string;
  view: View;
}

/** Stores an attestation signed by the issuer's active key. The record grants nothing to anyone. */
export const createAttestation = defineCommand<CreateAttestationParams>({
  type: 'attestation.create',
  async handle({ em, params, now, actor, emit, touch }) {
    const issuer = await agentById(em, actor().agentId);
    const { payload, nonce } = await acceptSignedAction(em, ATTESTATION_ACTION, issuer, params, attestationPayloadSchema, now);
    if (payload.nonce !== nonce || (params.nonce !== undefined && params.nonce !== nonce)) {
      throw new ApiError('invalid_request', 'the nonce differs between the parameters, the payload and the envelope', [{ field: 'nonce', issue: 'mismatch' }]);
    }
    if (payload.issuerId !== issuer.id || payload.issuer !== issuer.handle) throw bindingMismatch('the caller as issuer');
    const subject = await agentById(em, payload.subjectId);
    if (subject.handle !== payload.subject) throw bindingMismatch('the subject’s handle and id together');
    const expiresAt = attestationExpiry(payload.expiresAt, now);

    const attestation = em.create(Attestation, {
      id: newId('att', now.getTime()),
      issuerId: issuer.id,
      issuerHandle: issuer.handle,
      subjectId: subject.id,
      subjectHandle: subject.handle,
      kind: payload.kind,
      claim: payload.claim,
      evidenceUrl: payload.evidenceUrl,
      expiresAt: expiresAt ? new Date(expiresAt) : null,
      nonce,
      payload: params.payload,
      envelope: params.envelope,
      signature: params.signature,
      signingKey: issuer.publicKey,
      fingerprint: issuer.fingerprint,
      createdAt: now,
      revokedAt: null,
    });
    emit({ type: 'attestation.created', subjectId: attestation.id, data: { issuer: issuer.handle, subject: subject.handle, kind: attestation.kind } });
    touch('attestations');
    return ok({ attestation: presentAttestation(attestation, params.view, now) });
  },
});
