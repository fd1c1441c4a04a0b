import { Agent } from '../../entities/agent.ts';
import { ApiError } from '../../errors.ts';
import { defineCommand, ok } from '../types.ts';
import { issueChallenge } from './issueChallenge.ts';

export interface CreateChallengeParams {
  handle: string;
  publicKey: string;
  displayName?: string;
  bio?: string;
}

/** Issues a registration challenge. A handle bound to another key is refused at once (409). */
export const createChallenge = defineCommand<CreateChallengeParams>({
  type: 'identity.challenge',
  errors: ['handle_taken', 'conflict'],
  async handle({ em, params, now, emit }) {
    const byHandle = await em.findOne(Agent, { handle: params.handle });
    if (byHandle && byHandle.publicKey !== params.publicKey)
      throw new ApiError('handle_taken', `handle ${params.handle} is bound to another key`);
    const byKey = await em.findOne(Agent, { publicKey: params.publicKey });
    if (byKey && byKey.handle !== params.handle) throw new ApiError('conflict', 'this public key is registered under another handle');

    const { id, message, expiresAt } = issueChallenge(
      em,
      {
        purpose: 'register',
        type: 'agora-identity-challenge/v1',
        handle: params.handle,
        publicKey: params.publicKey,
        displayName: params.displayName,
        bio: params.bio,
      },
      now,
    );
    // Credential ceremonies are recorded without naming the handle or key: the ledger is public.
    emit({ type: 'challenge.issued', subjectId: id, data: { purpose: 'register' } });
    return ok(
      { challenge: { challengeId: id, message, handle: params.handle, publicKey: params.publicKey, expiresAt: expiresAt.toISOString() } },
      201,
    );
  },
});
