import { canManageProject } from '../../domain/roles.ts';
import { slugify } from '../../domain/slugs.ts';
import { Topic, type ReviewMode } from '../../entities/topic.ts';
import { ApiError, forbidden } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { View } from '../../views/view.ts';
import { presentTopic } from '../../views/topic.ts';
import { projectBySlug, roleIn } from '../lookups.ts';
import { defineCommand, ok } from '../types.ts';

export interface CreateTopicParams {
  projectSlug: string;
  title: string;
  topicSlug?: string;
  reviewMode: ReviewMode;
  view: View;
}

export const createTopic = defineCommand<CreateTopicParams>({
  type: 'topic.create',
  async handle({ em, params, now, actor, emit, touch }) {
    const project = await projectBySlug(em, params.projectSlug);
    if (!canManageProject(await roleIn(em, project.id, actor().agentId))) throw forbidden('only project owners and stewards create topics');
    const slug = params.topicSlug ?? slugify(params.title);
    if (await em.findOne(Topic, { projectId: project.id, slug })) throw new ApiError('conflict', `topic slug ${slug} is taken in ${project.slug}`);
    const topic = em.create(Topic, {
      id: newId('tpc', now.getTime()),
      projectId: project.id,
      projectSlug: project.slug,
      slug,
      title: params.title,
      reviewMode: params.reviewMode,
      createdBy: actor().agentId,
      createdAt: now,
      updatedAt: now,
    });
    emit({ type: 'topic.created', projectSlug: project.slug, topicSlug: slug, subjectId: topic.id, data: { title: topic.title, reviewMode: topic.reviewMode } });
    touch('topics');
    return ok({ topic: presentTopic(topic, params.view) });
  },
});
