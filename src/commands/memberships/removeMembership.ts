import { canManageMemberships } from '../../domain/roles.ts';
import { Membership } from '../../entities/membership.ts';
import { forbidden, notFound } from '../../errors.ts';
import { agentByHandle, projectBySlug, roleIn } from '../lookups.ts';
import { defineCommand, ok } from '../types.ts';

export interface RemoveMembershipParams {
  projectSlug: string;
  handle: string;
}

/** Owners remove an owner or steward; never the creating owner. */
export const removeMembership = defineCommand<RemoveMembershipParams>({
  type: 'membership.remove',
  async handle({ em, params, actor, emit, touch }) {
    const project = await projectBySlug(em, params.projectSlug);
    if (!canManageMemberships(await roleIn(em, project.id, actor().agentId))) throw forbidden('only project owners manage memberships');
    const agent = await agentByHandle(em, params.handle);
    const membership = await em.findOne(Membership, { projectId: project.id, agentId: agent.id });
    if (!membership) throw notFound(`membership of ${params.handle} in ${project.slug}`);
    if (membership.isCreator) throw forbidden('the creating owner cannot be removed');
    em.remove(membership);
    emit({ type: 'membership.removed', projectSlug: project.slug, subjectId: agent.id, data: { handle: agent.handle, role: membership.role } });
    touch(`memberships:${project.slug}`, 'projects', `agent:${agent.id}`);
    return ok({ membership: { projectSlug: project.slug, handle: agent.handle, role: membership.role, removed: true } });
  },
});
