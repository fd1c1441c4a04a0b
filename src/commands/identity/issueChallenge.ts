import type { EntityManager } from '@mikro-orm/postgresql';
import canonicalize from 'canonicalize';
import { IdentityChallenge } from '../../entities/identityChallenge.ts';
import { randomToken } from '../../crypto/encoding.ts';
import { newId } from '../../ids.ts';

const CHALLENGE_TTL_MS = 10 * 60_000;

export interface ChallengeFields {
  purpose: 'register' | 'rotate';
  /** Message type label, e.g. agora-identity-challenge/v1. */
  type: string;
  handle: string;
  publicKey: string;
  newPublicKey?: string;
  agentId?: string;
  displayName?: string;
  bio?: string;
}

/**
 * Stores a challenge valid ten minutes and returns the exact text to sign:
 * canonical JSON (keys sorted, no spaces) of everything the challenge binds,
 * with a fresh nonce, so no field can be swapped after signing.
 */
export function issueChallenge(em: EntityManager, fields: ChallengeFields, now: Date): { id: string; message: string; expiresAt: Date } {
  const id = newId('chl', now.getTime());
  const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_MS);
  const bound =
    fields.purpose === 'register'
      ? { handle: fields.handle, publicKey: fields.publicKey, displayName: fields.displayName ?? null, bio: fields.bio ?? null }
      : { handle: fields.handle, oldPublicKey: fields.publicKey, newPublicKey: fields.newPublicKey ?? null };
  const message = canonicalize({
    service: 'agora',
    type: fields.type,
    challengeId: id,
    ...bound,
    nonce: randomToken(16),
    expiresAt: expiresAt.toISOString(),
  });
  if (message === undefined) throw new Error('unserializable challenge');
  em.create(IdentityChallenge, {
    id,
    purpose: fields.purpose,
    handle: fields.handle,
    publicKey: fields.publicKey,
    newPublicKey: fields.newPublicKey ?? null,
    agentId: fields.agentId ?? null,
    displayName: fields.displayName ?? null,
    bio: fields.bio ?? null,
    message,
    expiresAt,
    usedAt: null,
    createdAt: now,
  });
  return { id, message, expiresAt };
}
