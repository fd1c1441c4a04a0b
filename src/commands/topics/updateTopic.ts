import { canManageProject } from '../../domain/roles.ts';
import type { ReviewMode } from '../../entities/topic.ts';
import { forbidden } from '../../errors.ts';
import type { View } from '../../views/view.ts';
import { presentTopic } from '../../views/topic.ts';
import { roleIn, topicById } from '../lookups.ts';
import { defineCommand, ok, type CommandContext } from '../types.ts';

interface TopicChange {
  topicId: string;
  title?: string;
  reviewMode?: ReviewMode;
  view: View;
}

/** Shared by `update` (title) and `set-review` (review mode): owners and stewards only. */
async function changeTopic({ em, params, now, actor, emit, touch }: CommandContext<TopicChange>, eventType: string) {
  const topic = await topicById(em, params.topicId);
  if (!canManageProject(await roleIn(em, topic.projectId, actor().agentId))) throw forbidden('only project owners and stewards change topics');
  const before = { title: topic.title, reviewMode: topic.reviewMode };
  if (params.title !== undefined) topic.title = params.title;
  if (params.reviewMode !== undefined) topic.reviewMode = params.reviewMode;
  if (topic.title !== before.title || topic.reviewMode !== before.reviewMode) {
    topic.updatedAt = now;
    emit({ type: eventType, projectSlug: topic.projectSlug, topicSlug: topic.slug, subjectId: topic.id, data: { before, after: { title: topic.title, reviewMode: topic.reviewMode } } });
    touch('topics');
  }
  return ok({ topic: presentTopic(topic, params.view) });
}

export const updateTopic = defineCommand<TopicChange>({
  type: 'topic.update',
  handle: (ctx) => changeTopic(ctx, 'topic.updated'),
});

export const setTopicReview = defineCommand<TopicChange>({
  type: 'topic.set-review',
  handle: (ctx) => changeTopic(ctx, 'topic.review-mode-changed'),
});
