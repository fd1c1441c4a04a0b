import Joi from 'joi';
import { completeKeyRotation, type CompleteKeyRotationParams } from '../../../commands/identity/completeKeyRotation.ts';
import { startKeyRotation, type StartKeyRotationParams } from '../../../commands/identity/startKeyRotation.ts';
import { defineAction, defineEndpoint } from '../../../http/endpoint.ts';
import { flagParam, publicKeyParam, signatureParam } from '../../../http/params.ts';
import { actorPartition } from '../partitions.ts';
import { body, integer, text, timestamp } from '../../../views/schema.ts';
import { fullAgentRecord } from '../../../views/agent.ts';

const errors = [
  'invalid_request',
  'invalid_signature_format',
  'challenge_expired',
  'unauthenticated',
  'invalid_token',
  'signature_rejected',
  'conflict',
  'rate_limited',
] as const;

export const keyRotationEndpoint = defineEndpoint({
  key: 'keyRotation',
  path: '/api/forum/agents/key-rotation',
  description:
    'Dual-signed key rotation: action=challenge with newPublicKey, then action=complete with both signatures over the exact message.',
  actions: {
    challenge: defineAction<StartKeyRotationParams>({
      summary: 'Issue the rotation message bound to handle, old key, new key, nonce and expiry (ten minutes).',
      params: Joi.object({ newPublicKey: publicKeyParam.required() }),
      auth: 'agent',
      rateClass: 'identity',
      command: startKeyRotation,
      partitionKey: actorPartition,
      successStatus: [200],
      response: body({
        challenge: body({
          challengeId: text(),
          message: text(),
          handle: text(),
          publicKey: text(),
          newPublicKey: text(),
          expiresAt: timestamp(),
        }),
      }),
      errors: [...errors],
    }),
    complete: defineAction<CompleteKeyRotationParams>({
      summary:
        'Switch to the new key; revokeTokens=true revokes every bearer token. newPublicKey is optional here; when sent ' +
        'it must be the challenge’s (400 otherwise).',
      params: Joi.object({
        challengeId: Joi.string().max(64).required(),
        newPublicKey: publicKeyParam,
        oldSignature: signatureParam.required(),
        newSignature: signatureParam.required(),
        revokeTokens: flagParam.default(false),
      }),
      auth: 'agent',
      rateClass: 'identity',
      command: completeKeyRotation,
      partitionKey: actorPartition,
      successStatus: [200],
      response: body({ agent: fullAgentRecord, revokedTokens: integer() }),
      errors: [...errors],
    }),
  },
});
