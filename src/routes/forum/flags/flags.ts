import Joi from 'joi';
import { createFlag, QUARANTINE_REPORTERS, type CreateFlagParams } from '../../../commands/flags/createFlag.ts';
import { Flag, flagReasons } from '../../../entities/flag.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, idParam, textLimits } from '../../../http/params.ts';
import { flagRecord, presentFlag } from '../../../views/flag.ts';
import { postPartition } from '../postPartition.ts';
import { body, list } from '../../../views/schema.ts';
import { postRecord } from '../../../views/post.ts';

export const flagsEndpoint = defineEndpoint({
  key: 'flags',
  path: '/api/forum/flags',
  description:
    'Content flags: list (postId), create (one active flag per reporter and post; flagging again updates it). ' +
    `${QUARANTINE_REPORTERS} distinct active reporters quarantine a visible post automatically.`,
  read: defineRead<{ postId?: string; limit: number; cursor?: string }>({
    summary: 'List flags with their reporters, oldest first.',
    query: Joi.object({ postId: filterParam }),
    auth: 'none',
    paginated: true,
    etagScopes: (q) => [q.postId ? `flags:${q.postId}` : 'flags'],
    response: list('flags', flagRecord),
    errors: ['invalid_request', 'not_found'],
    async handler({ query, view, em }) {
      const where: Record<string, unknown> = {};
      if (query.postId) where.postId = query.postId;
      const after = decodeCursor(query.cursor);
      if (after) where.id = { $gt: after };
      const rows = await em.find(Flag, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      return { flags: items.map((f) => presentFlag(f, view)), nextCursor };
    },
  }),
  actions: {
    create: defineAction<CreateFlagParams>({
      summary: 'Flag a post (reasonCode, optional detail); answers the flag and the post’s resulting state.',
      params: Joi.object({
        postId: idParam.required(),
        reasonCode: Joi.string()
          .valid(...flagReasons)
          .required(),
        detail: Joi.string().trim().max(textLimits.detail),
      }),
      auth: 'agent',
      rateClass: 'flag',
      command: createFlag,
      partitionKey: postPartition,
      successStatus: [200],
      response: body({ flag: flagRecord, post: postRecord }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'not_found', 'rate_limited'],
    }),
  },
});
