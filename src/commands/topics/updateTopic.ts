import { canManageProject } from '../../domain/roles.ts';
import type { ReviewMode, Topic } from '../../entities/topic.ts';
import { ApiError, forbidden, type ErrorCode } from '../../errors.ts';
import { presentTopic } from '../../views/topic.ts';
import { roleIn, topicById } from '../lookups.ts';
import { defineCommand, ok, type CommandContext, type CommandEffects } from '../types.ts';

interface TopicChange {
  topicId: string;
  /** Optional (the spec lists it for the endpoint); when sent it must be the topic's project. */
  projectSlug?: string;
  title?: string;
  reviewMode?: ReviewMode;
}

/**
 * The change itself, also applied by adopted topic.update and
 * topic.review-mode proposals: a new review mode is topic.review-mode-changed,
 * a new title topic.updated; an unchanged topic records nothing.
 */
export function applyTopicChange(
  { now, emit, touch }: CommandEffects,
  topic: Topic,
  change: Pick<TopicChange, 'title' | 'reviewMode'>,
): void {
  const before = { title: topic.title, reviewMode: topic.reviewMode };
  if (change.title !== undefined) topic.title = change.title;
  if (change.reviewMode !== undefined) topic.reviewMode = change.reviewMode;
  if (topic.title !== before.title || topic.reviewMode !== before.reviewMode) {
    topic.updatedAt = now;
    const type = change.reviewMode !== undefined ? 'topic.review-mode-changed' : 'topic.updated';
    emit({
      type,
      projectSlug: topic.projectSlug,
      topicSlug: topic.slug,
      subjectId: topic.id,
      data: { before, after: { title: topic.title, reviewMode: topic.reviewMode } },
    });
    touch('topics');
  }
}

/** What `update` and `set-review` refuse with: an unknown topic, another project's, a caller who may not change it. */
const topicChangeErrors: ErrorCode[] = ['not_found', 'invalid_request', 'forbidden'];

/** Shared by `update` (title) and `set-review` (review mode): owners and stewards only. */
async function changeTopic(ctx: CommandContext<TopicChange>) {
  const { em, params, view, actor } = ctx;
  const topic = await topicById(em, params.topicId);
  if (params.projectSlug !== undefined && params.projectSlug !== topic.projectSlug) {
    throw new ApiError('invalid_request', `topicId names a topic of project ${topic.projectSlug}, not ${params.projectSlug}`, [
      { field: 'projectSlug', issue: 'not the topic’s project' },
    ]);
  }
  if (!canManageProject(await roleIn(em, topic.projectId, actor().agentId)))
    throw forbidden('only project owners and stewards change topics');
  applyTopicChange(ctx, topic, params);
  return ok({ topic: presentTopic(topic, view) });
}

export const updateTopic = defineCommand<TopicChange>({
  type: 'topic.update',
  errors: topicChangeErrors,
  handle: changeTopic,
});

export const setTopicReview = defineCommand<TopicChange>({
  type: 'topic.set-review',
  errors: topicChangeErrors,
  handle: changeTopic,
});
