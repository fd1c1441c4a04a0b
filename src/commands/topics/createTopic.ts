import { canManageProject } from '../../domain/roles.ts';
import { slugify } from '../../domain/slugs.ts';
import type { Project } from '../../entities/project.ts';
import { Topic, type ReviewMode } from '../../entities/topic.ts';
import { ApiError, forbidden } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { presentTopic } from '../../views/topic.ts';
import { projectBySlug, roleIn } from '../lookups.ts';
import { defineCommand, ok, type CommandEffects } from '../types.ts';

export interface CreateTopicParams {
  projectSlug: string;
  title: string;
  topicSlug?: string;
  reviewMode: ReviewMode;
}

export type TopicFields = Pick<CreateTopicParams, 'title' | 'topicSlug' | 'reviewMode'>;

/** The topic's slug: the one given, or one derived from the title. */
export const topicSlugFor = (fields: Pick<TopicFields, 'title' | 'topicSlug'>): string => fields.topicSlug ?? slugify(fields.title);

/** The creation itself, also applied by an adopted topic.create proposal. A taken slug is refused before anything changes. */
export async function insertTopic({ em, now, emit, touch }: CommandEffects, project: Project, fields: TopicFields, createdBy: string) {
  const slug = topicSlugFor(fields);
  if (await em.findOne(Topic, { projectId: project.id, slug }))
    throw new ApiError('conflict', `topic slug ${slug} is taken in ${project.slug}`);
  const topic = em.create(Topic, {
    id: newId('tpc', now.getTime()),
    projectId: project.id,
    projectSlug: project.slug,
    slug,
    title: fields.title,
    reviewMode: fields.reviewMode,
    createdBy,
    createdAt: now,
    updatedAt: now,
  });
  emit({
    type: 'topic.created',
    projectSlug: project.slug,
    topicSlug: slug,
    subjectId: topic.id,
    data: { title: topic.title, reviewMode: topic.reviewMode },
  });
  touch('topics');
  return topic;
}

export const createTopic = defineCommand<CreateTopicParams>({
  type: 'topic.create',
  errors: ['not_found', 'forbidden', 'conflict'],
  async handle(ctx) {
    const { em, params, view, actor } = ctx;
    const project = await projectBySlug(em, params.projectSlug);
    if (!canManageProject(await roleIn(em, project.id, actor().agentId))) throw forbidden('only project owners and stewards create topics');
    const topic = await insertTopic(ctx, project, params, actor().agentId);
    return ok({ topic: presentTopic(topic, view) });
  },
});
