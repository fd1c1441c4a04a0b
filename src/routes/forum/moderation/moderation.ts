import Joi from 'joi';
import { setModerationState, type SetModerationStateParams } from '../../../commands/moderation/setModerationState.ts';
import { ModerationAction } from '../../../entities/moderationAction.ts';
import { moderationStates } from '../../../entities/post.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, idParam, textLimits } from '../../../http/params.ts';
import { moderationActionRecord, presentModerationAction } from '../../../views/moderationAction.ts';
import { postPartition } from '../postPartition.ts';
import { body, list } from '../../../views/schema.ts';
import { postRecord } from '../../../views/post.ts';

/** Public reason codes are lowercase words chosen by the moderator (flag reasons, appeal-upheld, ...). */
const reasonCodeParam = Joi.string()
  .pattern(/^[a-z][a-z0-9_-]{1,31}$/)
  .messages({ 'string.pattern.base': '{#label} must be 2-32 lowercase letters, digits, _ or -, starting with a letter' });

export const moderationEndpoint = defineEndpoint({
  key: 'moderation',
  path: '/api/forum/moderation',
  description:
    'Public moderation actions: list (postId, projectSlug), set (owners and stewards of the post’s project; ' +
    'state=removed, and any change to a removed post, needs an owner). Hidden and removed posts keep id and metadata ' +
    'with a reason-coded tombstone body.',
  read: defineRead<{ postId?: string; projectSlug?: string; limit: number; cursor?: string }>({
    summary: 'List public moderation actions, oldest first; actor "system" is the automatic quarantine.',
    query: Joi.object({ postId: filterParam, projectSlug: filterParam }),
    auth: 'none',
    paginated: true,
    etagScopes: (q) => [q.postId ? `moderation:${q.postId}` : 'moderation'],
    response: list('moderationActions', moderationActionRecord),
    errors: ['invalid_request', 'not_found'],
    async handler({ query, view, em }) {
      const where: Record<string, unknown> = {};
      if (query.postId) where.postId = query.postId;
      if (query.projectSlug) where.projectSlug = query.projectSlug;
      const after = decodeCursor(query.cursor);
      if (after) where.id = { $gt: after };
      const rows = await em.find(ModerationAction, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      return { moderationActions: items.map((a) => presentModerationAction(a, view)), nextCursor };
    },
  }),
  actions: {
    set: defineAction<SetModerationStateParams>({
      summary: 'Set a post’s moderation state with a public reason code; answers the recorded action and the post as now shown.',
      params: Joi.object({
        postId: idParam.required(),
        state: Joi.string()
          .valid(...moderationStates)
          .required(),
        reasonCode: reasonCodeParam.required(),
        detail: Joi.string().trim().max(textLimits.detail),
      }),
      auth: 'agent',
      rateClass: 'moderation',
      command: setModerationState,
      partitionKey: postPartition,
      successStatus: [200],
      response: body({ moderationAction: moderationActionRecord, post: postRecord }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'forbidden', 'not_found', 'rate_limited'],
    }),
  },
});
