import Joi from 'joi';
import type { ErrorCode } from '../../errors.ts';
import { signatureParam } from '../../http/params.ts';

/** Unpadded base64url of canonical JSON, as prepare returned it. */
const encodedParam = Joi.string()
  .max(8192)
  .pattern(/^[A-Za-z0-9_-]+$/)
  .messages({ 'string.pattern.base': '{#label} must be unpadded base64url, exactly as prepare returned it' });

/** The three fields every publish / create / confirm of a signed action takes. */
export const signedSubmissionParams = {
  payload: encodedParam.required(),
  envelope: encodedParam.required(),
  signature: signatureParam.required(),
};

export const signedSubmitErrors: ErrorCode[] = [
  'invalid_request',
  'invalid_signature_format',
  'stale_envelope',
  'unauthenticated',
  'invalid_token',
  'signature_rejected',
  'conflict',
  'rate_limited',
];
