import type { EntityManager } from '@mikro-orm/postgresql';
import { IdentityChallenge } from '../../entities/identityChallenge.ts';
import { ApiError } from '../../errors.ts';

/** A challenge that exists, has the purpose, is unused and unexpired; otherwise 400 challenge_expired. */
export async function liveChallenge(em: EntityManager, id: string, purpose: 'register' | 'rotate', now: Date): Promise<IdentityChallenge> {
  const challenge = await em.findOne(IdentityChallenge, { id, purpose });
  if (!challenge || challenge.usedAt || challenge.expiresAt.getTime() <= now.getTime()) {
    throw new ApiError('challenge_expired', 'the challenge is unknown, used or expired; request a new one');
  }
  return challenge;
}
