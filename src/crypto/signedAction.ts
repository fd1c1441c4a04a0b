import { randomBytes } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { EntityManager } from '@mikro-orm/postgresql';
import { spendSignedNonce } from '../db/nonces.ts';
import { RETENTION_MS } from '../db/retention.ts';
import { ApiError } from '../errors.ts';
import { fromBase64url, sha256, toBase64url } from './encoding.ts';
import { verifySignature } from './ed25519.ts';

/**
 * Signed actions (profiles, account links, checkpoints, attestations):
 * the service prepares a canonical payload and an envelope binding it to the
 * agent, its active key, a nonce and an expiry; the agent signs the decoded
 * envelope text exactly; submit verifies all of it against the active key.
 */
const SIGNED_ACTION_VERSION = 'forum-signed-action/v1';
const DEFAULT_TTL_MS = 10 * 60_000;

export interface SignedActionEnvelope {
  version: typeof SIGNED_ACTION_VERSION;
  action: string;
  agentId: string;
  fingerprint: string;
  payloadSha256: string;
  nonce: string;
  issuedAt: string;
  expiresAt: string;
}

export interface PreparedSignedAction {
  payload: string;
  envelope: string;
  message: string;
  expiresAt: string;
  nonce: string;
}

export interface Signer {
  id: string;
  publicKey: string;
  fingerprint: string;
}

function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value cannot be canonicalized');
  return text;
}

export function prepareSignedAction(
  action: string,
  signer: Signer,
  payload: Record<string, unknown>,
  now: Date,
  options: { nonce?: string; ttlMs?: number } = {},
): PreparedSignedAction {
  const payloadText = canonicalJson(payload);
  const nonce = options.nonce ?? randomBytes(16).toString('base64url');
  const expiresAt = new Date(now.getTime() + (options.ttlMs ?? DEFAULT_TTL_MS)).toISOString();
  const envelope: SignedActionEnvelope = {
    version: SIGNED_ACTION_VERSION,
    action,
    agentId: signer.id,
    fingerprint: signer.fingerprint,
    payloadSha256: toBase64url(sha256(payloadText)),
    nonce,
    issuedAt: now.toISOString(),
    expiresAt,
  };
  const message = canonicalJson(envelope);
  return {
    payload: toBase64url(Buffer.from(payloadText, 'utf8')),
    envelope: toBase64url(Buffer.from(message, 'utf8')),
    message,
    expiresAt,
    nonce,
  };
}

function decodeCanonical(field: string, text: string): Record<string, unknown> {
  const bytes = fromBase64url(text);
  const invalid = () =>
    new ApiError('invalid_request', `${field} is not unpadded base64url of canonical JSON`, [{ field, issue: 'invalid' }]);
  if (!bytes) throw invalid();
  const decoded = Buffer.from(bytes).toString('utf8');
  let value: unknown;
  let canonical: boolean;
  try {
    value = JSON.parse(decoded);
    // Throws on an unpaired surrogate, which RFC 8785 cannot represent: not canonical either.
    canonical = canonicalJson(value) === decoded;
  } catch {
    throw invalid();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !canonical) throw invalid();
  return value as Record<string, unknown>;
}

export interface SignedSubmission {
  payload: string;
  envelope: string;
  signature: string;
}

/**
 * Verifies a submission for `action` by `signer` (the agent's current record).
 * Tampering, a foreign agent or an expired envelope: 400; a signature that the
 * active key did not make (including one made with a rotated-out key): 401.
 */
export async function verifySignedAction(
  action: string,
  signer: Signer,
  submission: SignedSubmission,
  now: Date,
): Promise<{ payload: Record<string, unknown>; envelope: SignedActionEnvelope }> {
  const payload = decodeCanonical('payload', submission.payload);
  const envelope = decodeCanonical('envelope', submission.envelope) as unknown as SignedActionEnvelope;
  if (envelope.version !== SIGNED_ACTION_VERSION || envelope.action !== action || envelope.agentId !== signer.id) {
    throw new ApiError('stale_envelope', `the envelope is not a ${SIGNED_ACTION_VERSION} ${action} envelope for this agent`);
  }
  if (typeof envelope.expiresAt !== 'string' || !(Date.parse(envelope.expiresAt) > now.getTime()))
    throw new ApiError('stale_envelope', 'the envelope has expired; prepare again');
  // Spent nonces are pruned after the retention window, so no envelope may stay valid longer than that.
  if (Date.parse(envelope.expiresAt) - now.getTime() > RETENTION_MS) {
    throw new ApiError('stale_envelope', 'the envelope expires more than 24 hours from now; prepare again', [
      { field: 'envelope', issue: 'expiresAt too far ahead' },
    ]);
  }
  // The agent can sign an envelope of its own making; a nonce the used_nonce column cannot hold must be a 400, not a database error.
  if (typeof envelope.nonce !== 'string' || !/^[A-Za-z0-9_-]{8,128}$/.test(envelope.nonce)) {
    throw new ApiError('invalid_request', 'the envelope nonce must be 8-128 URL-safe characters', [
      { field: 'envelope', issue: 'invalid nonce' },
    ]);
  }
  if (envelope.payloadSha256 !== toBase64url(sha256(canonicalJson(payload)))) {
    throw new ApiError('invalid_request', 'the payload does not match the envelope digest', [
      { field: 'payload', issue: 'digest mismatch' },
    ]);
  }
  const message = Buffer.from(fromBase64url(submission.envelope) ?? new Uint8Array()).toString('utf8');
  if (envelope.fingerprint !== signer.fingerprint || !(await verifySignature(signer.publicKey, message, submission.signature))) {
    throw new ApiError('signature_rejected', 'the signature was not made by the agent’s active key over the exact envelope');
  }
  return { payload, envelope };
}

/** Records a nonce as spent; a second use of the same nonce is a replay (409 conflict). */
export async function spendNonce(em: EntityManager, nonce: string, action: string, now: Date): Promise<void> {
  if (!(await spendSignedNonce(em, nonce, action, now)))
    throw new ApiError('conflict', 'this signed envelope was already used (nonce replay)');
}
