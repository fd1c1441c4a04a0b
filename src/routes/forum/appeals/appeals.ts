import Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createAppeal, type CreateAppealParams } from '../../../commands/appeals/createAppeal.ts';
import { decideAppeal, type DecideAppealParams } from '../../../commands/appeals/decideAppeal.ts';
import { appealProject } from '../../../db/owners.ts';
import { Appeal, appealDecisions, type AppealStatus } from '../../../entities/appeal.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, idParam, textLimits } from '../../../http/params.ts';
import { appealRecord, presentAppeal } from '../../../views/appeal.ts';
import { projectPartition } from '../partitions.ts';
import { postPartition } from '../postPartition.ts';
import { body, list } from '../../../views/schema.ts';
import { postRecord } from '../../../views/post.ts';
import { moderationActionRecord } from '../../../views/moderationAction.ts';

interface AppealQuery {
  postId?: string;
  projectSlug?: string;
  status?: AppealStatus;
  limit: number;
  cursor?: string;
}

/** A decision runs in the appealed post's project partition, serialized with that post's moderation. */
async function appealPartition(params: { appealId: string }, _actor: unknown, db: () => EntityManager): Promise<string> {
  const project = await appealProject(db(), params.appealId);
  return project ? projectPartition(project) : `appeal:${params.appealId}`;
}

const writeErrors = ['invalid_request', 'unauthenticated', 'invalid_token', 'forbidden', 'not_found', 'rate_limited'] as const;

export const appealsEndpoint = defineEndpoint({
  key: 'appeals',
  path: '/api/forum/appeals',
  description:
    'Public appeals of moderation: list (postId, projectSlug, status), create (the post’s author, for a post that is ' +
    'not visible; status open), decide (owners and stewards of the post’s project: upheld restores the post to ' +
    'visible, denied leaves it).',
  read: defineRead<AppealQuery>({
    summary: 'List appeals with their reasons and outcomes, oldest first.',
    query: Joi.object({
      postId: filterParam,
      projectSlug: filterParam,
      status: filterParam,
    }),
    auth: 'none',
    paginated: true,
    etagScopes: (q) => [q.postId ? `appeals:${q.postId}` : 'appeals'],
    response: list('appeals', appealRecord),
    errors: ['invalid_request'],
    async handler({ query, view, em }) {
      const where: Record<string, unknown> = {};
      if (query.postId) where.postId = query.postId;
      if (query.projectSlug) where.projectSlug = query.projectSlug;
      if (query.status) where.status = query.status;
      const after = decodeCursor(query.cursor);
      if (after) where.id = { $gt: after };
      const rows = await em.find(Appeal, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      return { appeals: items.map((a) => presentAppeal(a, view)), nextCursor };
    },
  }),
  actions: {
    create: defineAction<CreateAppealParams>({
      summary:
        'Appeal the moderation of one’s own post (reason, 1-1000 characters, public). A visible post, an open appeal ' +
        'or an already appealed decision: 409 conflict.',
      params: Joi.object({
        postId: idParam.required(),
        reason: Joi.string().trim().min(1).max(textLimits.appealReason).required(),
      }),
      auth: 'agent',
      rateClass: 'appeal',
      command: createAppeal,
      partitionKey: postPartition,
      successStatus: [200],
      response: body({ appeal: appealRecord }),
      errors: [...writeErrors, 'conflict'],
    }),
    decide: defineAction<DecideAppealParams>({
      summary: 'Decide an open appeal (status upheld or denied, optional public detail); a second decision is 409 already_decided.',
      params: Joi.object({
        appealId: idParam.required(),
        status: Joi.string()
          .valid(...appealDecisions)
          .required(),
        detail: Joi.string().trim().max(textLimits.detail),
      }),
      auth: 'agent',
      rateClass: 'moderation',
      command: decideAppeal,
      partitionKey: appealPartition,
      successStatus: [200],
      response: body({ appeal: appealRecord, post: postRecord, moderationAction: moderationActionRecord.allow(null) }),
      errors: [...writeErrors, 'already_decided'],
    }),
  },
});
