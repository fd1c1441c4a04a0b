import type { EntityManager } from '@mikro-orm/postgresql';
import { Attestation, type AttestationKind } from '../../entities/attestation.ts';
import { ApiError } from '../../errors.ts';
import { attestationExpiry } from '../../domain/attestations.ts';
import type { SignedSubmission } from '../../crypto/signedAction.ts';
import { newId } from '../../ids.ts';
import { presentAttestation } from '../../views/attestation.ts';
import { agentById } from '../lookups.ts';
import { acceptSignedAction, bindingMismatch, preparedByNonce, signedActionErrors } from '../signing.ts';
import { defineCommand, ok } from '../types.ts';
import { ATTESTATION_ACTION, attestationPayloadSchema, type AttestationPayload } from './attestationPayload.ts';

/**
 * Two forms: the contract's (payload, envelope, signature) and the spec's
 * (nonce and signature, with the attested fields). The nonce identifies the
 * prepared message; any field sent in both forms must agree.
 */
export interface CreateAttestationParams extends Partial<Omit<SignedSubmission, 'signature'>> {
  signature: string;
  nonce?: string;
  subject?: string;
  kind?: AttestationKind;
  claim?: string;
  evidenceUrl?: string;
  expiresAt?: string;
}

function disagreement(field: string): ApiError {
  return new ApiError('invalid_request', `${field} differs from the prepared attestation`, [
    { field, issue: 'differs from the prepared attestation' },
  ]);
}

/** The spec's attested fields, where sent, must say what the signed payload says. */
function checkStatedFields(params: CreateAttestationParams, payload: AttestationPayload): void {
  if (params.subject !== undefined && params.subject !== payload.subject) throw disagreement('subject');
  if (params.kind !== undefined && params.kind !== payload.kind) throw disagreement('kind');
  if (params.claim !== undefined && params.claim !== payload.claim) throw disagreement('claim');
  if (params.evidenceUrl !== undefined && params.evidenceUrl !== payload.evidenceUrl) throw disagreement('evidenceUrl');
  if (params.expiresAt !== undefined && (payload.expiresAt === null || Date.parse(params.expiresAt) !== Date.parse(payload.expiresAt)))
    throw disagreement('expiresAt');
}

/** The submission to verify: as sent (its nonce must then agree), or the prepared one the nonce names. */
async function submissionOf(em: EntityManager, issuerId: string, params: CreateAttestationParams): Promise<SignedSubmission> {
  if ((params.payload === undefined) !== (params.envelope === undefined)) {
    throw new ApiError('invalid_request', 'payload and envelope come together, as prepare returned them', [
      { field: params.payload === undefined ? 'payload' : 'envelope', issue: 'required with the other' },
    ]);
  }
  if (params.payload !== undefined && params.envelope !== undefined)
    return { payload: params.payload, envelope: params.envelope, signature: params.signature };
  if (params.nonce === undefined) throw new ApiError('invalid_request', 'send nonce, or payload and envelope, with the signature');
  return { ...(await preparedByNonce(em, ATTESTATION_ACTION, issuerId, params.nonce)), signature: params.signature };
}

/** Stores an attestation signed by the issuer's active key. The record grants nothing to anyone. */
export const createAttestation = defineCommand<CreateAttestationParams>({
  type: 'attestation.create',
  errors: [...signedActionErrors, 'not_found'],
  async handle({ em, params, view, now, actor, emit, touch }) {
    const issuer = await agentById(em, actor().agentId);
    const submission = await submissionOf(em, issuer.id, params);
    const { payload, nonce } = await acceptSignedAction(em, ATTESTATION_ACTION, issuer, submission, attestationPayloadSchema, now);
    if (payload.nonce !== nonce || (params.nonce !== undefined && params.nonce !== nonce)) {
      throw new ApiError('invalid_request', 'the nonce differs between the parameters, the payload and the envelope', [
        { field: 'nonce', issue: 'mismatch' },
      ]);
    }
    checkStatedFields(params, payload);
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
      payload: submission.payload,
      envelope: submission.envelope,
      signature: submission.signature,
      signingKey: issuer.publicKey,
      fingerprint: issuer.fingerprint,
      createdAt: now,
      revokedAt: null,
    });
    emit({
      type: 'attestation.created',
      subjectId: attestation.id,
      data: { issuer: issuer.handle, subject: subject.handle, kind: attestation.kind },
    });
    touch('attestations');
    return ok({ attestation: presentAttestation(attestation, view, now) });
  },
});
