import { describe, expect, it } from 'vitest';
import {
  ATTESTATION_CLAIM_MAX,
  attestationExpiry,
  attestationStatus,
  claimRule,
  evidenceUrlRule,
  expiresAtRule,
  kindRule,
} from '../../src/domain/attestations.ts';
import { ApiError } from '../../src/errors.ts';

const DAY = 86_400_000;
const now = new Date('2026-09-11T12:00:00.000Z');
const valid = (rule: { validate(value: unknown): { error?: unknown } }, value: unknown) => rule.validate(value).error === undefined;

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('attestation parameters', () => {
  it('accepts the four attestation kinds and nothing else', () => {
    for (const kind of ['vouch', 'capability', 'affiliation', 'external-proof']) expect(valid(kindRule, kind), kind).toBe(true);
    expect(valid(kindRule, 'endorsement')).toBe(false);
  });

  it('trims a claim and refuses one that is empty once trimmed', () => {
    expect(claimRule.validate('  reviews carefully  ').value).toBe('reviews carefully');
    expect(valid(claimRule, '   ')).toBe(false);
  });

  it('accepts a claim of 500 characters and refuses 501', () => {
    expect(ATTESTATION_CLAIM_MAX).toBe(500);
    expect(valid(claimRule, 'c'.repeat(500))).toBe(true);
    expect(valid(claimRule, 'c'.repeat(501))).toBe(false);
  });

  it('accepts https evidence and refuses any other scheme with its own message', () => {
    expect(valid(evidenceUrlRule, 'https://example.org/proof')).toBe(true);
    expect(evidenceUrlRule.validate('http://example.org/proof').error?.message).toBe('"value" must be an https:// URL');
  });

  it('refuses an evidence URL longer than 2048 characters', () => {
    const base = 'https://example.org/';
    expect(valid(evidenceUrlRule, base + 'p'.repeat(2048 - base.length))).toBe(true);
    expect(valid(evidenceUrlRule, base + 'p'.repeat(2049 - base.length))).toBe(false);
  });
});

describe('RFC 3339 expiry timestamps', () => {
  it('accepts UTC, lowercase separators, an offset and up to nine fraction digits', () => {
    for (const value of [
      '2027-01-31T10:00:00Z',
      '2027-01-31t10:00:00z',
      '2027-01-31T10:00:00+02:00',
      '2027-01-31T10:00:00-05:30',
      '2027-01-31T10:00:00.123456789Z',
      '2027-01-31T10:00:00.5Z',
    ]) {
      expect(valid(expiresAtRule, value), value).toBe(true);
    }
  });

  it('refuses a timestamp without a zone, without seconds or with a space for T', () => {
    for (const value of ['2027-01-31T10:00:00', '2027-01-31T10:00Z', '2027-01-31 10:00:00Z', '2027-01-31']) {
      expect(valid(expiresAtRule, value), value).toBe(false);
    }
  });

  it('refuses an offset without a colon and more than nine fraction digits', () => {
    expect(valid(expiresAtRule, '2027-01-31T10:00:00+0200')).toBe(false);
    expect(valid(expiresAtRule, '2027-01-31T10:00:00.1234567891Z')).toBe(false);
  });

  it('refuses hour 24, which Date.parse reads as the next day', () => {
    expect(valid(expiresAtRule, '2027-01-01T24:00:00Z')).toBe(false);
    expect(valid(expiresAtRule, '2027-01-01T23:59:59Z')).toBe(true);
  });

  it('refuses an expanded year and text around the timestamp', () => {
    expect(valid(expiresAtRule, '+002027-01-31T10:00:00Z')).toBe(false);
    expect(valid(expiresAtRule, ' 2027-01-31T10:00:00Z')).toBe(false);
    expect(valid(expiresAtRule, '2027-01-31T10:00:00Z ')).toBe(false);
  });

  it('refuses a month or a time that does not exist', () => {
    expect(valid(expiresAtRule, '2027-13-01T00:00:00Z')).toBe(false);
    expect(valid(expiresAtRule, '2027-01-01T10:60:00Z')).toBe(false);
  });

  it('accepts the last day of each month and refuses the day after, which Date.parse would roll over', () => {
    expect(valid(expiresAtRule, '2027-04-30T00:00:00Z')).toBe(true);
    expect(valid(expiresAtRule, '2027-04-31T00:00:00Z')).toBe(false);
    expect(valid(expiresAtRule, '2027-12-31T00:00:00Z')).toBe(true);
  });

  it('accepts 29 February in a leap year only', () => {
    expect(valid(expiresAtRule, '2028-02-29T00:00:00Z')).toBe(true);
    expect(valid(expiresAtRule, '2027-02-29T00:00:00Z')).toBe(false);
  });

  it('refuses with its own message', () => {
    expect(expiresAtRule.validate('tomorrow').error?.message).toBe('"value" must be an RFC 3339 timestamp');
  });
});

describe('attestation expiry', () => {
  it('is null when no expiry is given', () => {
    expect(attestationExpiry(undefined, now)).toBeNull();
    expect(attestationExpiry(null, now)).toBeNull();
  });

  it('normalises a future expiry to UTC with milliseconds', () => {
    expect(attestationExpiry('2026-09-12T14:00:00+02:00', now)).toBe('2026-09-12T12:00:00.000Z');
  });

  it('refuses an expiry at the current instant as in the past', () => {
    const error = refusal(() => attestationExpiry(now.toISOString(), now));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toBe('expiresAt is in the past');
    expect(error.details).toEqual([{ field: 'expiresAt', issue: 'is in the past' }]);
  });

  it('accepts an expiry exactly 366 days ahead and refuses one a millisecond later', () => {
    const limit = new Date(now.getTime() + 366 * DAY);
    expect(attestationExpiry(limit.toISOString(), now)).toBe(limit.toISOString());
    const error = refusal(() => attestationExpiry(new Date(limit.getTime() + 1).toISOString(), now));
    expect(error.message).toBe('expiresAt is more than 366 days ahead');
    expect(error.details).toEqual([{ field: 'expiresAt', issue: 'is more than 366 days ahead' }]);
  });

  it('accepts an expiry a millisecond from now', () => {
    const soon = new Date(now.getTime() + 1).toISOString();
    expect(attestationExpiry(soon, now)).toBe(soon);
  });
});

describe('attestation status', () => {
  it('is revoked once revoked, even after it expired', () => {
    expect(attestationStatus({ revokedAt: new Date(now.getTime() - DAY), expiresAt: new Date(now.getTime() - DAY) }, now)).toBe('revoked');
  });

  it('is expired from the instant of its expiry', () => {
    expect(attestationStatus({ revokedAt: null, expiresAt: now }, now)).toBe('expired');
  });

  it('is active before its expiry', () => {
    expect(attestationStatus({ revokedAt: null, expiresAt: new Date(now.getTime() + 1) }, now)).toBe('active');
  });

  it('is active without an expiry', () => {
    expect(attestationStatus({ revokedAt: null, expiresAt: null }, now)).toBe('active');
    expect(attestationStatus({}, now)).toBe('active');
  });
});
