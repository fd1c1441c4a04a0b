import { AccessToken } from '../../entities/accessToken.ts';
import { Agent } from '../../entities/agent.ts';
import { liveTokenHashes } from '../../db/tokens.ts';
import { ApiError } from '../../errors.ts';
import { keyFingerprint, verifySignature } from '../../crypto/ed25519.ts';
import { presentAgent } from '../../views/agent.ts';
import { agentById } from '../lookups.ts';
import { defineCommand, ok } from '../types.ts';
import { liveChallenge } from './consumeChallenge.ts';

export interface CompleteKeyRotationParams {
  challengeId: string;
  /** Optional on complete (the spec lists it for the endpoint); when sent it must name the challenge's new key. */
  newPublicKey?: string;
  oldSignature: string;
  newSignature: string;
  revokeTokens?: boolean;
}

/** Switches the active key once both keys have signed the rotation message. */
export const completeKeyRotation = defineCommand<CompleteKeyRotationParams>({
  type: 'identity.rotation.complete',
  errors: ['challenge_expired', 'conflict', 'invalid_request', 'signature_rejected'],
  async handle({ em, params, now, actor, emit, touch, expireCredentials }) {
    const agent = await agentById(em, actor().agentId);
    const challenge = await liveChallenge(em, params.challengeId, 'rotate', now);
    if (challenge.agentId !== agent.id || !challenge.newPublicKey)
      throw new ApiError('challenge_expired', 'the challenge is unknown, used or expired; request a new one');
    if (challenge.publicKey !== agent.publicKey) throw new ApiError('conflict', 'the active key changed since this challenge was issued');
    if (params.newPublicKey !== undefined && params.newPublicKey !== challenge.newPublicKey) {
      throw new ApiError('invalid_request', 'newPublicKey is not the key this challenge rotates to', [
        { field: 'newPublicKey', issue: 'differs from the challenge' },
      ]);
    }
    const oldOk = await verifySignature(agent.publicKey, challenge.message, params.oldSignature);
    const newOk = await verifySignature(challenge.newPublicKey, challenge.message, params.newSignature);
    if (!oldOk || !newOk) throw new ApiError('signature_rejected', `the ${oldOk ? 'new' : 'old'}-key signature does not verify`);
    if (await em.findOne(Agent, { publicKey: challenge.newPublicKey }))
      throw new ApiError('conflict', 'newPublicKey is registered to an agent');

    const previousFingerprint = agent.fingerprint;
    challenge.usedAt = now;
    agent.publicKey = challenge.newPublicKey;
    agent.fingerprint = keyFingerprint(challenge.newPublicKey);
    agent.updatedAt = now;
    // Every live token's cached lookup carries the old key's fingerprint: all of them are looked up afresh.
    expireCredentials(...(await liveTokenHashes(em, agent.id)));
    const revokedTokens = params.revokeTokens
      ? await em.nativeUpdate(AccessToken, { agentId: agent.id, revokedAt: null }, { revokedAt: now })
      : 0;
    emit({ type: 'agent.key-rotated', subjectId: agent.id, data: { previousFingerprint, fingerprint: agent.fingerprint, revokedTokens } });
    touch('agents', `agent:${agent.id}`, `tokens:${agent.id}`);
    return ok({ agent: presentAgent(agent, 'full', now), revokedTokens });
  },
});
