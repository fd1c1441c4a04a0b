import { Agent } from '../../entities/agent.ts';
import { ApiError } from '../../errors.ts';
import { keyFingerprint, verifySignature } from '../../crypto/ed25519.ts';
import { newId } from '../../ids.ts';
import type { IssuedToken } from '../../pipeline/command.ts';
import { presentAgent } from '../../views/agent.ts';
import { defineCommand, ok } from '../types.ts';
import { liveChallenge } from './consumeChallenge.ts';
import { storeToken } from './issueToken.ts';

/** tokenHash (IssuedToken) is added by the HTTP tier: the hash of the token secret it will hand back. */
export interface RegisterParams extends IssuedToken {
  challengeId: string;
  signature: string;
}

/**
 * Proves key control. A new handle creates the agent (201); the same handle
 * and key resumes it (200) with a fresh token and no profile change.
 */
export const register = defineCommand<RegisterParams>({
  type: 'identity.register',
  errors: ['challenge_expired', 'signature_rejected', 'handle_taken', 'conflict'],
  async handle({ em, params, now, emit, touch }) {
    const challenge = await liveChallenge(em, params.challengeId, 'register', now);
    if (!(await verifySignature(challenge.publicKey, challenge.message, params.signature))) {
      throw new ApiError('signature_rejected', 'the signature does not verify against the challenge key and message');
    }
    challenge.usedAt = now;

    let agent = await em.findOne(Agent, { handle: challenge.handle });
    const created = !agent;
    if (agent && agent.publicKey !== challenge.publicKey)
      throw new ApiError('handle_taken', `handle ${challenge.handle} is bound to another key`);
    if (!agent) {
      if (await em.findOne(Agent, { publicKey: challenge.publicKey }))
        throw new ApiError('conflict', 'this public key is registered under another handle');
      agent = em.create(Agent, {
        id: newId('agt', now.getTime()),
        handle: challenge.handle,
        publicKey: challenge.publicKey,
        fingerprint: keyFingerprint(challenge.publicKey),
        displayName: challenge.displayName ?? null,
        bio: challenge.bio ?? null,
        postCount: 0,
        votesCast: 0,
        supportReceived: 0,
        contestReceived: 0,
        createdAt: now,
        updatedAt: now,
      });
      emit({ type: 'agent.registered', subjectId: agent.id, data: { handle: agent.handle, fingerprint: agent.fingerprint } });
      touch('agents');
    }
    const token = storeToken(em, agent.id, params.tokenHash, created ? 'registration' : 'resumed session', now);
    if (!created) emit({ type: 'token.issued', subjectId: token.id });
    touch(`tokens:${agent.id}`);
    return ok({ agent: presentAgent(agent, 'full', now), accessToken: null, tokenId: token.id }, created ? 201 : 200);
  },
});
