import Joi from 'joi';
import { attestationKinds } from '../entities/attestation.ts';
import { ApiError } from '../errors.ts';

/** Rules shared by the prepare parameters and the signed payload checked at create. */
export const ATTESTATION_CLAIM_MAX = 500;
const ATTESTATION_MAX_DAYS = 366;
const DAY_MS = 86_400_000;

export const kindRule = Joi.string().valid(...attestationKinds);
export const claimRule = Joi.string().trim().min(1).max(ATTESTATION_CLAIM_MAX);
export const evidenceUrlRule = Joi.string()
  .max(2048)
  .uri({ scheme: ['https'] })
  .messages({ 'string.uriCustomScheme': '{#label} must be an https:// URL' });

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Date.parse rolls a day the month lacks (April 31) over into the next month, and reads hour 24 as the next
 * day's midnight; RFC 3339 refuses both (hours are 00-23).
 */
function isRfc3339(value: string): boolean {
  const match = rfc3339.exec(value);
  if (!match || Number.isNaN(Date.parse(value))) return false;
  const [year, month, day, hour] = match.slice(1, 5).map(Number) as [number, number, number, number];
  return hour <= 23 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export const expiresAtRule = Joi.string()
  .custom((value: string, helpers) => (isRfc3339(value) ? value : helpers.error('any.invalid')))
  .messages({ 'any.invalid': '{#label} must be an RFC 3339 timestamp' });

/** A future expiry at most 366 days ahead, normalised to UTC with milliseconds; null when none. */
export function attestationExpiry(expiresAt: string | null | undefined, now: Date): string | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  const at = Date.parse(expiresAt);
  const problem =
    at <= now.getTime()
      ? 'is in the past'
      : at > now.getTime() + ATTESTATION_MAX_DAYS * DAY_MS
        ? `is more than ${ATTESTATION_MAX_DAYS} days ahead`
        : null;
  if (problem) throw new ApiError('invalid_request', `expiresAt ${problem}`, [{ field: 'expiresAt', issue: problem }]);
  return new Date(at).toISOString();
}

export type AttestationStatus = 'active' | 'revoked' | 'expired';

export function attestationStatus(a: { revokedAt?: Date | null; expiresAt?: Date | null }, now: Date): AttestationStatus {
  if (a.revokedAt) return 'revoked';
  if (a.expiresAt && a.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}
