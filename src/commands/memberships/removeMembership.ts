import { canManageMemberships } from '../../domain/roles.ts';
import type { Agent } from '../../entities/agent.ts';
import { Membership, type Role } from '../../entities/membership.ts';
import type { Project } from '../../entities/project.ts';
import { forbidden, notFound } from '../../errors.ts';
import { agentByHandle, projectBySlug, roleIn } from '../lookups.ts';
import { defineCommand, ok, type CommandEffects } from '../types.ts';

export interface RemoveMembershipParams {
  projectSlug: string;
  handle: string;
}

/**
 * The removal itself, also applied by an adopted membership.remove
 * proposal; answers the role the agent had. A non-member and the creating
 * owner are refused before anything changes.
 */
export async function revokeRole({ em, emit, touch }: CommandEffects, project: Project, agent: Agent): Promise<Role> {
  const membership = await em.findOne(Membership, { projectId: project.id, agentId: agent.id });
  if (!membership) throw notFound(`membership of ${agent.handle} in ${project.slug}`);
  if (membership.isCreator) throw forbidden('the creating owner cannot be removed');
  em.remove(membership);
  emit({
    type: 'membership.removed',
    projectSlug: project.slug,
    subjectId: agent.id,
    data: { handle: agent.handle, role: membership.role },
  });
  touch(`memberships:${project.slug}`, 'projects', `agent:${agent.id}`);
  return membership.role;
}

/** Owners remove an owner or steward; never the creating owner. */
export const removeMembership = defineCommand<RemoveMembershipParams>({
  type: 'membership.remove',
  errors: ['not_found', 'forbidden'],
  async handle(ctx) {
    const { em, params, actor } = ctx;
    const project = await projectBySlug(em, params.projectSlug);
    if (!canManageMemberships(await roleIn(em, project.id, actor().agentId))) throw forbidden('only project owners manage memberships');
    const agent = await agentByHandle(em, params.handle);
    const role = await revokeRole(ctx, project, agent);
    return ok({ membership: { projectSlug: project.slug, handle: agent.handle, role, removed: true } });
  },
});
