import { createHmac, timingSafeEqual } from 'node:crypto';
import Joi from 'joi';
import { ApiError } from '../errors.ts';

/**
 * Codes the accounts service mints with the shared secret (contract.md,
 * Account links): `base64url(JSON claims) + "." + base64url(HMAC-SHA256(secret, first part))`,
 * exp in Unix seconds. A link code carries { accountId, nonce, exp }; a
 * revocation notice carries { action: "revoke", accountId, nonce, exp }. The
 * claim sets are disjoint (unknown keys are refused), so neither passes for the other.
 */
export interface AccountCodeClaims {
  accountId: string;
  nonce: string;
  exp: number;
}

const accountIdPattern = /^[\x21-\x7e]{1,128}$/;
const accountIdRule = Joi.string().pattern(accountIdPattern).required();
const nonceRule = Joi.string()
  .pattern(/^[A-Za-z0-9_-]{8,64}$/)
  .required();
const expRule = Joi.number().integer().min(0).required();

const linkClaims = Joi.object<AccountCodeClaims>({ accountId: accountIdRule, nonce: nonceRule, exp: expRule });
const revocationClaims = Joi.object<AccountCodeClaims & { action: 'revoke' }>({
  action: Joi.string().valid('revoke').required(),
  accountId: accountIdRule,
  nonce: nonceRule,
  exp: expRule,
});

// Unpadded base64url is the format; padding is tolerated because the MAC covers the text as sent.
const partPattern = /^[A-Za-z0-9_-]+={0,2}$/;

function openCode(secret: string, field: string, code: string, schema: Joi.ObjectSchema, now: Date): AccountCodeClaims {
  const invalid = (issue: string) =>
    new ApiError('invalid_request', `${field} is not a valid code from the accounts service`, [{ field, issue }]);
  const parts = code.split('.');
  const [body, mac] = parts;
  if (parts.length !== 2 || !body || !mac || !partPattern.test(body) || !partPattern.test(mac)) throw invalid('malformed');
  const expected = createHmac('sha256', secret).update(body, 'utf8').digest();
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid('HMAC does not verify');
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalid('malformed claims');
  }
  const { value, error } = schema.validate(claims, { convert: false, allowUnknown: false });
  if (error) throw invalid(`claims: ${error.message.replace(/"/g, '')}`);
  const verified = value as AccountCodeClaims;
  if (verified.exp * 1000 <= now.getTime())
    throw new ApiError('challenge_expired', `${field} has expired; ask the accounts service for a new one`);
  return verified;
}

export function openLinkCode(secret: string, code: string, now: Date): AccountCodeClaims {
  return openCode(secret, 'link_code', code, linkClaims, now);
}

export function openRevocationNotice(secret: string, notice: string, now: Date): AccountCodeClaims {
  return openCode(secret, 'notice', notice, revocationClaims, now);
}

/** The account id of a notice without verifying it: only to pick a queue partition before the worker checks everything. */
export function unverifiedAccountId(notice: string): string | null {
  try {
    const claims: unknown = JSON.parse(Buffer.from(notice.split('.')[0] ?? '', 'base64url').toString('utf8'));
    const accountId = (claims as { accountId?: unknown } | null)?.accountId;
    // The partition key reaches Postgres (hashtext) before the MAC is checked: only a well-formed id may shape it.
    return typeof accountId === 'string' && accountIdPattern.test(accountId) ? accountId : null;
  } catch {
    return null;
  }
}
