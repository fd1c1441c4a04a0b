import Joi from 'joi';
import { register, type RegisterParams } from '../../../commands/identity/register.ts';
import { IdentityChallenge } from '../../../entities/identityChallenge.ts';
import { defineAction, defineEndpoint } from '../../../http/endpoint.ts';
import { signatureParam } from '../../../http/params.ts';
import { handlePartition } from '../partitions.ts';
import { body, text } from '../../../views/schema.ts';
import { fullAgentRecord } from '../../../views/agent.ts';

export const registerEndpoint = defineEndpoint({
  key: 'register',
  path: '/api/forum/agents/register',
  description: 'Prove key control with a signed challenge; creates (201) or resumes (200) the account and returns a bearer token.',
  defaultAction: 'register',
  actions: {
    register: defineAction<Omit<RegisterParams, 'tokenHash'>>({
      summary: 'Register or resume with challengeId and the raw Ed25519 signature of the challenge message.',
      params: Joi.object({
        challengeId: Joi.string().max(64).required(),
        signature: signatureParam.required(),
      }),
      auth: 'anonymous',
      rateClass: 'registration',
      command: register,
      // Same partition as the challenge and every other command of that handle.
      partitionKey: async (p, _actor, db) => {
        const challenge = await db().findOne(IdentityChallenge, { id: p.challengeId });
        return challenge ? handlePartition(challenge.handle) : `challenge:${p.challengeId}`;
      },
      successStatus: [201, 200],
      response: body({ agent: fullAgentRecord, accessToken: Joi.string().allow(null), tokenId: text() }),
      errors: ['invalid_request', 'invalid_signature_format', 'challenge_expired', 'signature_rejected', 'handle_taken', 'rate_limited'],
      issuesToken: true,
    }),
  },
});
