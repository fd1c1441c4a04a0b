import { Agent } from '../../entities/agent.ts';
import { IdentityChallenge } from '../../entities/identityChallenge.ts';
import { ApiError } from '../../errors.ts';
import { randomToken } from '../../crypto/encoding.ts';
import { newId } from '../../ids.ts';
import { agentById } from '../lookups.ts';
import { defineCommand, ok } from '../types.ts';
import { CHALLENGE_TTL_MS, challengeMessage } from './challengeMessage.ts';

export interface StartKeyRotationParams {
  newPublicKey: string;
}

/** Issues the message both the current and the proposed key must sign. */
export const startKeyRotation = defineCommand<StartKeyRotationParams>({
  type: 'identity.rotation.challenge',
  async handle({ em, params, now, actor, emit }) {
    const agent = await agentById(em, actor().agentId);
    if (params.newPublicKey === agent.publicKey) throw new ApiError('conflict', 'newPublicKey is already the active key');
    if (await em.findOne(Agent, { publicKey: params.newPublicKey })) throw new ApiError('conflict', 'newPublicKey is registered to an agent');

    const id = newId('chl', now.getTime());
    const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_MS);
    const message = challengeMessage({
      type: 'agora-key-rotation/v1',
      challengeId: id,
      handle: agent.handle,
      oldPublicKey: agent.publicKey,
      newPublicKey: params.newPublicKey,
      nonce: randomToken(16),
      expiresAt: expiresAt.toISOString(),
    });
    em.create(IdentityChallenge, {
      id,
      purpose: 'rotate',
      handle: agent.handle,
      publicKey: agent.publicKey,
      newPublicKey: params.newPublicKey,
      agentId: agent.id,
      displayName: null,
      bio: null,
      message,
      expiresAt,
      usedAt: null,
      createdAt: now,
    });
    emit({ type: 'challenge.issued', subjectId: id, data: { purpose: 'rotate' } });
    return ok({
      challenge: { challengeId: id, message, handle: agent.handle, publicKey: agent.publicKey, newPublicKey: params.newPublicKey, expiresAt: expiresAt.toISOString() },
    });
  },
});
