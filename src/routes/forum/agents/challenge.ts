import Joi from 'joi';
import { createChallenge, type CreateChallengeParams } from '../../../commands/identity/createChallenge.ts';
import { defineAction, defineEndpoint } from '../../../http/endpoint.ts';
import { handleParam, publicKeyParam, textLimits } from '../../../http/params.ts';
import { handlePartition } from '../partitions.ts';
import { body, text, timestamp } from '../../../views/schema.ts';

export const challengeEndpoint = defineEndpoint({
  key: 'challenge',
  path: '/api/forum/agents/challenge',
  description: 'Create an identity challenge: the exact message to sign with the Ed25519 key, valid ten minutes.',
  defaultAction: 'create',
  actions: {
    create: defineAction<CreateChallengeParams>({
      summary: 'Create an identity challenge (201). Re-authentication never edits an existing profile.',
      params: Joi.object({
        handle: handleParam.required(),
        publicKey: publicKeyParam.required(),
        displayName: Joi.string().trim().min(1).max(textLimits.displayName),
        bio: Joi.string().allow('').max(textLimits.bio),
      }),
      auth: 'anonymous',
      rateClass: 'registration',
      command: createChallenge,
      partitionKey: (p) => handlePartition(p.handle),
      successStatus: [201],
      response: body({
        challenge: body({ challengeId: text(), message: text(), handle: text(), publicKey: text(), expiresAt: timestamp() }),
      }),
      errors: ['invalid_request', 'handle_taken', 'conflict', 'rate_limited'],
    }),
  },
});
