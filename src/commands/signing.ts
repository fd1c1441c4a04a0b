import type Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import { preparedAction, rememberPreparedAction } from '../db/nonces.ts';
import type { Agent } from '../entities/agent.ts';
import { ApiError, type ErrorCode } from '../errors.ts';
import { refuseUnstorableText } from '../domain/storableText.ts';
import { fromBase64url, sha256, toBase64url } from '../crypto/encoding.ts';
import { spendNonce, verifySignedAction, type PreparedSignedAction, type SignedSubmission, type Signer } from '../crypto/signedAction.ts';

/** The agent's active key as the signer of a signed action: always read from the database, never from the token. */
export function signerOf(agent: Agent): Signer {
  return { id: agent.id, publicKey: agent.publicKey, fingerprint: agent.fingerprint };
}

/** The `signing` block every prepare answers with (contract.md, Signed actions). */
export function signingBlock(prepared: PreparedSignedAction) {
  return { payload: prepared.payload, envelope: prepared.envelope, message: prepared.message, expiresAt: prepared.expiresAt };
}

/** What acceptSignedAction refuses a submission with: a malformed or unbound payload, a stale envelope, a foreign signature, a spent nonce. */
export const signedActionErrors: ErrorCode[] = ['invalid_request', 'stale_envelope', 'signature_rejected', 'conflict'];

export interface AcceptedSubmission<T> {
  payload: T;
  nonce: string;
  /** base64url SHA-256 of the exact signed message (the decoded envelope). */
  hash: string;
}

/**
 * Everything a submit step shares: the signature by the active key over the
 * exact envelope, the payload's shape (an agent can sign any payload it likes,
 * so nothing in it is trusted until checked here and by the caller), and the
 * nonce, spent in the command's transaction so a refusal later rolls it back.
 */
export async function acceptSignedAction<T>(
  em: EntityManager,
  action: string,
  agent: Agent,
  submission: SignedSubmission,
  schema: Joi.ObjectSchema<T>,
  now: Date,
): Promise<AcceptedSubmission<T>> {
  const { payload, envelope } = await verifySignedAction(action, signerOf(agent), submission, now);
  const { value, error } = schema.validate(payload, { convert: false, abortEarly: false, allowUnknown: false });
  if (error) {
    const details = error.details.map((d) => ({ field: `payload.${d.path.join('.')}`, issue: d.message.replace(/"/g, '') }));
    throw new ApiError('invalid_request', `the signed payload is not a valid ${action} payload`, details);
  }
  refuseUnstorableText(value, 'payload');
  await spendNonce(em, envelope.nonce, action, now);
  const message = fromBase64url(submission.envelope) ?? new Uint8Array();
  return { payload: value as T, nonce: envelope.nonce, hash: toBase64url(sha256(message)) };
}

/** The signed payload names another agent than the caller: the signature is genuine but not for this submission. */
export function bindingMismatch(what: string): ApiError {
  return new ApiError('invalid_request', `the signed payload does not bind ${what}`, [
    { field: 'payload', issue: `does not bind ${what}` },
  ]);
}

/** Keeps a prepared message under its nonce until it expires (db/retention.ts prunes it after). */
export async function rememberPrepared(em: EntityManager, action: string, agentId: string, prepared: PreparedSignedAction): Promise<void> {
  await rememberPreparedAction(em, {
    nonce: prepared.nonce,
    action,
    agentId,
    payload: prepared.payload,
    envelope: prepared.envelope,
    expiresAt: prepared.expiresAt,
  });
}

/**
 * The payload and envelope prepared for this agent under `nonce`. A nonce
 * that names no live preparation of this agent (unknown, another agent's,
 * expired and pruned) is 404 alike.
 */
export async function preparedByNonce(
  em: EntityManager,
  action: string,
  agentId: string,
  nonce: string,
): Promise<{ payload: string; envelope: string }> {
  const row = await preparedAction(em, nonce, action, agentId);
  if (!row)
    throw new ApiError('not_found', 'no prepared attestation of yours has this nonce; prepare again', [
      { field: 'nonce', issue: 'unknown' },
    ]);
  return row;
}
