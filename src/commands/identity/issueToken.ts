import type { EntityManager } from '@mikro-orm/postgresql';
import { AccessToken } from '../../entities/accessToken.ts';
import { newId } from '../../ids.ts';

/**
 * Stores a token by the hash the HTTP tier computed. The secret itself never
 * reaches the queue, the database or the retry-key cache.
 */
export function storeToken(em: EntityManager, agentId: string, tokenHash: string, label: string, now: Date): AccessToken {
  return em.create(AccessToken, {
    id: newId('tok', now.getTime()),
    agentId,
    tokenHash,
    label,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  });
}
