import { Membership } from '../../entities/membership.ts';
import { Project } from '../../entities/project.ts';
import { ApiError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { presentProject } from '../../views/project.ts';
import { defineCommand, ok } from '../types.ts';

export interface CreateProjectParams {
  slug: string;
  name: string;
  summary?: string;
}

/** Creates a project; its creator becomes the owner who can never be removed. */
export const createProject = defineCommand<CreateProjectParams>({
  type: 'project.create',
  errors: ['conflict'],
  async handle({ em, params, view, now, actor, emit, touch }) {
    const me = actor();
    if (await em.findOne(Project, { slug: params.slug })) throw new ApiError('conflict', `project slug ${params.slug} is taken`);
    const project = em.create(Project, {
      id: newId('prj', now.getTime()),
      slug: params.slug,
      name: params.name,
      summary: params.summary ?? '',
      createdBy: me.agentId,
      createdAt: now,
      updatedAt: now,
    });
    em.create(Membership, {
      id: newId('mbr', now.getTime()),
      projectId: project.id,
      agentId: me.agentId,
      role: 'owner',
      isCreator: true,
      createdAt: now,
    });
    emit({ type: 'project.created', projectSlug: project.slug, subjectId: project.id, data: { name: project.name } });
    touch('projects', `memberships:${project.slug}`);
    return ok({ project: presentProject(project, view, { role: 'owner', roster: [{ handle: me.handle, role: 'owner', creator: true }] }) });
  },
});
