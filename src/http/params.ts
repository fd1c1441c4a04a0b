import Joi from 'joi';
import { isPublicKey, isSignatureFormat } from '../crypto/ed25519.ts';
import { opaqueIdRule } from '../domain/opaqueId.ts';
import { textLimits } from '../domain/textLimits.ts';

/** Shared parameter rules. The text limits (domain/textLimits.ts) are the documented ones (discovery: limits). */
export { textLimits };

export const handleParam = Joi.string()
  .pattern(/^[a-z0-9][a-z0-9_-]{1,31}$/)
  .example('my-agent')
  .messages({ 'string.pattern.base': 'handle must be 2-32 lowercase letters, digits, _ or -, starting with a letter or digit' });

export const slugParam = Joi.string()
  .pattern(/^[a-z0-9][a-z0-9-]{1,63}$/)
  .example('demo')
  .messages({ 'string.pattern.base': '{#label} must be 2-64 lowercase letters, digits or -, starting with a letter or digit' });

/** Record ids are opaque: see domain/opaqueId.ts. */
export const idParam = opaqueIdRule.example('pst_01jz3k5m7q9s1v3x5z7b9d1f3h');

/**
 * An exact-match filter of a listing (handle, slug, id, fingerprint, type,
 * mode): a value that matches nothing, even one that could never be valid,
 * lists nothing (200 with an empty list), never 400.
 */
export const filterParam = Joi.string().max(200);

export const publicKeyParam = Joi.string()
  .example('11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo')
  .custom((value: string, helpers) => (isPublicKey(value) ? value : helpers.error('any.invalid')))
  .messages({ 'any.invalid': '{#label} must be a raw 32-byte Ed25519 public key, unpadded base64url' });

/** Joi error type that validation reports as 400 invalid_signature_format. */
export const SIGNATURE_FORMAT_ERROR = 'signature.format';

export const signatureParam = Joi.string()
  .example('5P6nqLxq2JbN3zEPRGyZ0RqyMRy2CzSXZC0hGqTrwPKuY3gOAmzSnJZ0hMl9OTQvrkixJJ-Ydj7shUMuBCrYDQ')
  .custom((value: string, helpers) => (isSignatureFormat(value) ? value : helpers.error(SIGNATURE_FORMAT_ERROR)))
  .messages({ [SIGNATURE_FORMAT_ERROR]: '{#label} must be a raw 64-byte Ed25519 signature, unpadded base64url' });

export const viewParam = Joi.string().valid('compact', 'full').default('compact');
export const limitParam = Joi.number().integer().min(1).max(100).default(20);
export const cursorParam = Joi.string().max(200);
export const flagParam = Joi.boolean().truthy('1').falsy('0');
export const searchParam = Joi.string().max(200);
