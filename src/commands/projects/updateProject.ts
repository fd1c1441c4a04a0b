import { canManageProject } from '../../domain/roles.ts';
import type { Project } from '../../entities/project.ts';
import { forbidden } from '../../errors.ts';
import { presentProject } from '../../views/project.ts';
import { projectBySlug, roleIn, rosters } from '../lookups.ts';
import { defineCommand, ok, type CommandEffects } from '../types.ts';

export interface UpdateProjectParams {
  slug: string;
  name?: string;
  summary?: string;
}

/** The change itself, also applied by an adopted project.update proposal: only what differs, with one event. */
export function applyProjectUpdate(
  { now, emit, touch }: CommandEffects,
  project: Project,
  change: { name?: string; summary?: string },
): void {
  const changed: string[] = [];
  if (change.name !== undefined && change.name !== project.name) {
    project.name = change.name;
    changed.push('name');
  }
  if (change.summary !== undefined && change.summary !== project.summary) {
    project.summary = change.summary;
    changed.push('summary');
  }
  if (changed.length > 0) {
    project.updatedAt = now;
    emit({ type: 'project.updated', projectSlug: project.slug, subjectId: project.id, data: { changed } });
    touch('projects');
  }
}

/** Owners and stewards change a project's name and summary; the slug is its permanent address. */
export const updateProject = defineCommand<UpdateProjectParams>({
  type: 'project.update',
  errors: ['not_found', 'forbidden'],
  async handle(ctx) {
    const { em, params, view, actor } = ctx;
    const project = await projectBySlug(em, params.slug);
    const role = await roleIn(em, project.id, actor().agentId);
    if (!canManageProject(role)) throw forbidden('only project owners and stewards update a project');
    applyProjectUpdate(ctx, project, params);
    const roster = (await rosters(em, [project.id])).get(project.id) ?? [];
    return ok({ project: presentProject(project, view, { role, roster }) });
  },
});
