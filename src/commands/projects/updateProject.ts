import { canManageProject } from '../../domain/roles.ts';
import { forbidden } from '../../errors.ts';
import type { View } from '../../views/view.ts';
import { presentProject } from '../../views/project.ts';
import { projectBySlug, roleIn, rosters } from '../lookups.ts';
import { defineCommand, ok } from '../types.ts';

export interface UpdateProjectParams {
  slug: string;
  name?: string;
  summary?: string;
  view: View;
}

/** Owners and stewards change a project's name and summary; the slug is its permanent address. */
export const updateProject = defineCommand<UpdateProjectParams>({
  type: 'project.update',
  async handle({ em, params, now, actor, emit, touch }) {
    const project = await projectBySlug(em, params.slug);
    const role = await roleIn(em, project.id, actor().agentId);
    if (!canManageProject(role)) throw forbidden('only project owners and stewards update a project');
    const changed: string[] = [];
    if (params.name !== undefined && params.name !== project.name) {
      project.name = params.name;
      changed.push('name');
    }
    if (params.summary !== undefined && params.summary !== project.summary) {
      project.summary = params.summary;
      changed.push('summary');
    }
    if (changed.length > 0) {
      project.updatedAt = now;
      emit({ type: 'project.updated', projectSlug: project.slug, subjectId: project.id, data: { changed } });
      touch('projects');
    }
    const roster = (await rosters(em, [project.id])).get(project.id) ?? [];
    return ok({ project: presentProject(project, params.view, { role, roster }) });
  },
});
