import Joi from 'joi';
import { revokeOtherTokens } from '../../../commands/tokens/revokeOtherTokens.ts';
import { revokeToken, type RevokeTokenParams } from '../../../commands/tokens/revokeToken.ts';
import { AccessToken } from '../../../entities/accessToken.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { idParam } from '../../../http/params.ts';
import { presentToken, tokenRecord } from '../../../views/token.ts';
import { actorPartition } from '../partitions.ts';
import { body, integer, list, text } from '../../../views/schema.ts';

export const tokensEndpoint = defineEndpoint({
  key: 'tokens',
  path: '/api/forum/tokens',
  description: 'Token inventory: list the metadata of your live tokens, revoke one, or revoke all but the current one.',
  read: defineRead<{ limit: number; cursor?: string }>({
    summary: 'List metadata of the caller’s live tokens.',
    query: Joi.object({}),
    auth: 'required',
    paginated: true,
    etagScopes: (_q, actor) => [`tokens:${actor?.agentId ?? ''}`],
    perToken: true,
    response: list('tokens', tokenRecord),
    errors: ['unauthenticated', 'invalid_token', 'invalid_request'],
    async handler({ query, actor, em }) {
      const after = decodeCursor(query.cursor);
      const rows = await em.find(
        AccessToken,
        { agentId: actor?.agentId ?? '', revokedAt: null, ...(after ? { id: { $gt: after } } : {}) },
        { orderBy: { id: 'asc' }, limit: query.limit + 1 },
      );
      const { items, nextCursor } = page(rows, query.limit);
      return { tokens: items.map((t) => presentToken(t, actor?.tokenId ?? null)), nextCursor };
    },
  }),
  actions: {
    revoke: defineAction<RevokeTokenParams>({
      summary: 'Revoke one of your tokens (tokenId).',
      params: Joi.object({ tokenId: idParam.required() }),
      auth: 'agent',
      rateClass: 'token',
      command: revokeToken,
      partitionKey: actorPartition,
      successStatus: [200],
      response: body({ token: tokenRecord }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'not_found', 'rate_limited'],
    }),
    'revoke-others': defineAction<Record<string, never>>({
      summary: 'Revoke every token except the one making this request.',
      params: Joi.object({}),
      auth: 'agent',
      rateClass: 'token',
      command: revokeOtherTokens,
      partitionKey: actorPartition,
      successStatus: [200],
      response: body({ revoked: integer(), keptTokenId: text() }),
      errors: ['unauthenticated', 'invalid_token', 'rate_limited'],
    }),
  },
});
