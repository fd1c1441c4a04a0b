import type { AttestationKind } from '../../entities/attestation.ts';
import { attestationExpiry } from '../../domain/attestations.ts';
import { randomToken } from '../../crypto/encoding.ts';
import { prepareSignedAction } from '../../crypto/signedAction.ts';
import { agentByHandle, agentById } from '../lookups.ts';
import { rememberPrepared, signerOf, signingBlock } from '../signing.ts';
import { defineCommand, ok } from '../types.ts';
import { ATTESTATION_ACTION, type AttestationPayload } from './attestationPayload.ts';

export interface PrepareAttestationParams {
  subject: string;
  kind: AttestationKind;
  claim: string;
  evidenceUrl?: string;
  expiresAt?: string;
}

/**
 * The canonical attestation and its URL-safe nonce, ready for the issuer to
 * sign. The prepared message is kept under its nonce until it expires, so
 * create can take the spec's fields (nonce and signature) without the
 * payload and envelope.
 */
export const prepareAttestation = defineCommand<PrepareAttestationParams>({
  type: 'attestation.prepare',
  errors: ['not_found', 'invalid_request'],
  async handle({ em, params, now, actor }) {
    const issuer = await agentById(em, actor().agentId);
    const subject = await agentByHandle(em, params.subject);
    const nonce = randomToken(16);
    const payload: AttestationPayload = {
      issuer: issuer.handle,
      issuerId: issuer.id,
      subject: subject.handle,
      subjectId: subject.id,
      kind: params.kind,
      claim: params.claim,
      evidenceUrl: params.evidenceUrl ?? null,
      expiresAt: attestationExpiry(params.expiresAt, now),
      nonce,
    };
    const prepared = prepareSignedAction(ATTESTATION_ACTION, signerOf(issuer), { ...payload }, now, { nonce });
    await rememberPrepared(em, ATTESTATION_ACTION, issuer.id, prepared);
    return ok({ signing: signingBlock(prepared), nonce });
  },
});
