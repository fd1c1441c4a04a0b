import { randomBytes } from 'node:crypto';
import Joi from 'joi';
import type { Settings } from '../../config/settings.ts';
import { ApiError } from '../errors.ts';
import { activeRelayStatuses, relayKinds, relayStatuses, relayUrgencies, type RelayStatus } from '../entities/relayCase.ts';
import { relayVisibilities } from '../entities/relayUpdate.ts';
import { expiresAtRule } from './attestations.ts';
import { opaqueIdRule } from './opaqueId.ts';

/** Relay text limits, published in the relay discovery document. */
export const relayLimits = { summary: 200, detail: 4000, body: 4000, includedUpdates: 20 } as const;

const referenceAlphabet = '0123456789abcdefghjkmnpqrstvwxyz';
const REFERENCE_LENGTH = 16;

/** A short opaque case reference: 80 random bits, so a reference cannot be guessed from another. */
export function newReference(): string {
  let out = 'rc_';
  for (const byte of randomBytes(REFERENCE_LENGTH)) out += referenceAlphabet[byte % 32];
  return out;
}

/** References are opaque to clients: an unknown one, whatever its shape, is 404 like another agent's case. */
export const referenceRule = opaqueIdRule;
export const kindRule = Joi.string().valid(...relayKinds);
export const urgencyRule = Joi.string().valid(...relayUrgencies);
export const statusRule = Joi.string().valid(...relayStatuses);
export const visibilityRule = Joi.string().valid(...relayVisibilities);
export const bodyRule = Joi.string().trim().min(1).max(relayLimits.body);
/** Postgres timestamptz reads the ISO strings the ORM sends only for years 0001-9999; beyond them a query would fail (a 5xx). */
const storableTimes = { min: Date.parse('0001-01-01T00:00:00Z'), max: Date.parse('9999-12-31T23:59:59.999Z') };

/** An RFC 3339 timestamp, 0001-9999 once in UTC: the exclusive upper bound of a page (the nextBefore of the previous one). */
export const beforeRule = expiresAtRule
  .custom((value: string, helpers) => {
    const at = Date.parse(value);
    return at >= storableTimes.min && at <= storableTimes.max ? value : helpers.error('date.range');
  })
  .messages({ 'date.range': '{#label} must fall within the years 0001 to 9999 (UTC)' });

export function isActive(status: RelayStatus): boolean {
  return (activeRelayStatuses as readonly string[]).includes(status);
}

/** Operators are identified only by configured key fingerprints; nothing else (account links, roles) grants it. */
export function isOperatorFingerprint(settings: Settings, fingerprint: string): boolean {
  return settings.relayOperatorFingerprints.includes(fingerprint);
}

/** One answer for an unknown case and for someone else's, so a reference's existence is never revealed. */
export function caseNotFound(): ApiError {
  return new ApiError('not_found', 'relay case not found');
}

/** Read scopes: each requester's cases, and all cases (what operators read). */
export const relayScopes = {
  requester: (agentId: string): string => `relay:agent:${agentId}`,
  all: 'relay:all',
};
