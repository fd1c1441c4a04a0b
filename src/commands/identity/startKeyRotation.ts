import { Agent } from '../../entities/agent.ts';
import { ApiError } from '../../errors.ts';
import { agentById } from '../lookups.ts';
import { defineCommand, ok } from '../types.ts';
import { issueChallenge } from './issueChallenge.ts';

export interface StartKeyRotationParams {
  newPublicKey: string;
}

/** Issues the message both the current and the proposed key must sign. */
export const startKeyRotation = defineCommand<StartKeyRotationParams>({
  type: 'identity.rotation.challenge',
  errors: ['conflict'],
  async handle({ em, params, now, actor, emit }) {
    const agent = await agentById(em, actor().agentId);
    if (params.newPublicKey === agent.publicKey) throw new ApiError('conflict', 'newPublicKey is already the active key');
    if (await em.findOne(Agent, { publicKey: params.newPublicKey }))
      throw new ApiError('conflict', 'newPublicKey is registered to an agent');

    const { id, message, expiresAt } = issueChallenge(
      em,
      {
        purpose: 'rotate',
        type: 'agora-key-rotation/v1',
        handle: agent.handle,
        publicKey: agent.publicKey,
        newPublicKey: params.newPublicKey,
        agentId: agent.id,
      },
      now,
    );
    emit({ type: 'challenge.issued', subjectId: id, data: { purpose: 'rotate' }, actor: null });
    return ok({
      challenge: {
        challengeId: id,
        message,
        handle: agent.handle,
        publicKey: agent.publicKey,
        newPublicKey: params.newPublicKey,
        expiresAt: expiresAt.toISOString(),
      },
    });
  },
});
