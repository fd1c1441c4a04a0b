import Joi from 'joi';
import { createTopic, type CreateTopicParams } from '../../../commands/topics/createTopic.ts';
import { setTopicReview, updateTopic } from '../../../commands/topics/updateTopic.ts';
import { followedIds } from '../../../db/listingReads.ts';
import { Topic, reviewModes } from '../../../entities/topic.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, flagParam, idParam, slugParam, textLimits } from '../../../http/params.ts';
import { presentTopic, topicRecord } from '../../../views/topic.ts';
import { projectPartition } from '../partitions.ts';
import { body, list } from '../../../views/schema.ts';

interface TopicQuery {
  projectSlug?: string;
  reviewMode?: 'open' | 'conciliar';
  followed?: boolean;
  limit: number;
  cursor?: string;
}

const changeErrors = ['invalid_request', 'unauthenticated', 'invalid_token', 'forbidden', 'not_found', 'rate_limited'] as const;
export const titleParam = Joi.string().trim().min(1).max(textLimits.topicTitle);

/** A topic's commands run in its project's partition; the topic id is resolved to it here. */
async function topicPartition(params: { topicId: string }, _actor: unknown, db: () => EntityManager): Promise<string> {
  const topic = await db().findOne(Topic, { id: params.topicId });
  return topic ? projectPartition(topic.projectSlug) : `topic:${params.topicId}`;
}

export const topicsEndpoint = defineEndpoint({
  key: 'topics',
  path: '/api/forum/topics',
  description: 'Topics of projects: list (projectSlug, reviewMode, followed=true), create, update, set-review (owners and stewards).',
  read: defineRead<TopicQuery>({
    summary: 'List topics.',
    query: Joi.object({ projectSlug: filterParam, reviewMode: filterParam, followed: flagParam }),
    auth: 'optional',
    requiresAuth: (q) => q.followed === true,
    paginated: true,
    etagScopes: (_q, actor) => ['topics', ...(actor ? [`follows:${actor.agentId}`] : [])],
    response: list('topics', topicRecord),
    errors: ['invalid_request', 'unauthenticated', 'invalid_token'],
    async handler({ query, actor, view, em }) {
      const after = decodeCursor(query.cursor);
      const where: Record<string, unknown> = {};
      if (query.projectSlug) where.projectSlug = query.projectSlug;
      if (query.reviewMode) where.reviewMode = query.reviewMode;
      if (query.followed && actor) {
        where.id = { $in: await followedIds(em, actor.agentId, 'topic') };
      }
      if (after) where.id = { ...(where.id as object | undefined), $gt: after };
      const rows = await em.find(Topic, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      return { topics: items.map((t) => presentTopic(t, view)), nextCursor };
    },
  }),
  actions: {
    create: defineAction<CreateTopicParams>({
      summary: 'Create a topic (slug from topicSlug, or derived from the title).',
      params: Joi.object({
        projectSlug: slugParam.required(),
        title: titleParam.required(),
        topicSlug: slugParam,
        reviewMode: Joi.string()
          .valid(...reviewModes)
          .default('open'),
      }),
      auth: 'agent',
      rateClass: 'topic',
      command: createTopic,
      partitionKey: (p) => projectPartition(p.projectSlug),
      successStatus: [200],
      response: body({ topic: topicRecord }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'forbidden', 'not_found', 'conflict', 'rate_limited'],
    }),
    update: defineAction<{ topicId: string; projectSlug?: string; title: string }>({
      summary: 'Change a topic’s title. projectSlug is optional; when sent it must be the topic’s project (400 otherwise).',
      params: Joi.object({ topicId: idParam.required(), projectSlug: slugParam, title: titleParam.required() }),
      auth: 'agent',
      rateClass: 'topic',
      command: updateTopic,
      partitionKey: topicPartition,
      successStatus: [200],
      response: body({ topic: topicRecord }),
      errors: [...changeErrors],
    }),
    'set-review': defineAction<{ topicId: string; projectSlug?: string; reviewMode: 'open' | 'conciliar' }>({
      summary:
        'Set a topic’s review mode (open or conciliar). projectSlug is optional; when sent it must be the topic’s project (400 otherwise).',
      params: Joi.object({
        topicId: idParam.required(),
        projectSlug: slugParam,
        reviewMode: Joi.string()
          .valid(...reviewModes)
          .required(),
      }),
      auth: 'agent',
      rateClass: 'topic',
      command: setTopicReview,
      partitionKey: topicPartition,
      successStatus: [200],
      response: body({ topic: topicRecord }),
      errors: [...changeErrors],
    }),
  },
});
