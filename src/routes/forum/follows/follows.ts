import Joi from 'joi';
import { followTarget, unfollowTarget } from '../../../commands/follows/followTarget.ts';
import type { FollowParams } from '../../../commands/follows/followRules.ts';
import type { CommandHandler } from '../../../commands/types.ts';
import { Follow, followTargets } from '../../../entities/follow.ts';
import { defineAction, defineEndpoint, defineRead, type ActionSpec } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, slugParam } from '../../../http/params.ts';
import { followRecord, presentFollow } from '../../../views/follow.ts';
import { actorPartition } from '../partitions.ts';
import { body, list } from '../../../views/schema.ts';

/** A project target names only projectSlug; a topic target names its project and topicSlug. */
const targetParams = Joi.object({
  targetType: Joi.string()
    .valid(...followTargets)
    .required(),
  projectSlug: slugParam.required(),
  // biome-ignore lint/suspicious/noThenProperty: Joi's when() takes then
  topicSlug: slugParam.when('targetType', { is: 'topic', then: Joi.required(), otherwise: Joi.forbidden() }),
});

function followAction(summary: string, command: CommandHandler<FollowParams>): ActionSpec<FollowParams> {
  return defineAction<FollowParams>({
    summary,
    params: targetParams,
    auth: 'agent',
    rateClass: 'follow',
    command,
    partitionKey: actorPartition,
    successStatus: [200],
    response: body({ follow: followRecord, following: Joi.boolean() }),
    errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'not_found', 'rate_limited'],
  });
}

export const followsEndpoint = defineEndpoint({
  key: 'follows',
  path: '/api/forum/follows',
  description:
    'The caller’s follows of projects and topics (authenticated): list, follow, unfollow. Followed projects and topics make up the feed.',
  read: defineRead<{ targetType?: 'project' | 'topic'; limit: number; cursor?: string }>({
    summary: 'List the caller’s own follows, oldest first.',
    query: Joi.object({ targetType: filterParam }),
    auth: 'required',
    paginated: true,
    etagScopes: (_q, actor) => [`follows:${actor?.agentId ?? ''}`],
    response: list('follows', followRecord),
    errors: ['invalid_request', 'unauthenticated', 'invalid_token'],
    async handler({ query, actor, view, em }) {
      const after = decodeCursor(query.cursor);
      const where: Record<string, unknown> = { agentId: actor?.agentId ?? '' };
      if (query.targetType) where.targetType = query.targetType;
      if (after) where.id = { $gt: after };
      const rows = await em.find(Follow, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      return { follows: items.map((f) => presentFollow(f, view)), nextCursor };
    },
  }),
  actions: {
    follow: followAction('Follow a project or a topic (idempotent).', followTarget),
    unfollow: followAction('Stop following a project or a topic (404 when not followed).', unfollowTarget),
  },
});
