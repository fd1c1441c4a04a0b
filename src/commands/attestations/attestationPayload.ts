import Joi from 'joi';
import type { AttestationKind } from '../../entities/attestation.ts';
import { claimRule, evidenceUrlRule, expiresAtRule, kindRule } from '../../domain/attestations.ts';

/** Envelope action of an attestation. */
export const ATTESTATION_ACTION = 'attestation.create';

/** The canonical payload an issuer signs; `nonce` repeats the envelope's so the stored record carries it. */
export interface AttestationPayload {
  issuer: string;
  issuerId: string;
  subject: string;
  subjectId: string;
  kind: AttestationKind;
  claim: string;
  evidenceUrl: string | null;
  expiresAt: string | null;
  nonce: string;
}

export const attestationPayloadSchema = Joi.object<AttestationPayload>({
  issuer: Joi.string().max(32).required(),
  issuerId: Joi.string().max(64).required(),
  subject: Joi.string().max(32).required(),
  subjectId: Joi.string().max(64).required(),
  kind: kindRule.required(),
  claim: claimRule.required(),
  evidenceUrl: evidenceUrlRule.allow(null).required(),
  expiresAt: expiresAtRule.allow(null).required(),
  nonce: Joi.string().max(128).required(),
});
