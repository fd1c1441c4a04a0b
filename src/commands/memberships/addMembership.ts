import { canManageMemberships } from '../../domain/roles.ts';
import { Membership, type Role } from '../../entities/membership.ts';
import { forbidden } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { View } from '../../views/view.ts';
import { presentMembership } from '../../views/membership.ts';
import { agentByHandle, projectBySlug, roleIn } from '../lookups.ts';
import { defineCommand, ok } from '../types.ts';

export interface AddMembershipParams {
  projectSlug: string;
  handle: string;
  role: Role;
  view: View;
}

/** Owners add an owner or steward, or change a member's role. The creating owner stays an owner. */
export const addMembership = defineCommand<AddMembershipParams>({
  type: 'membership.add',
  async handle({ em, params, now, actor, emit, touch }) {
    const project = await projectBySlug(em, params.projectSlug);
    if (!canManageMemberships(await roleIn(em, project.id, actor().agentId))) throw forbidden('only project owners manage memberships');
    const agent = await agentByHandle(em, params.handle);
    let membership = await em.findOne(Membership, { projectId: project.id, agentId: agent.id });
    if (membership?.isCreator && params.role !== 'owner') throw forbidden('the creating owner cannot be demoted');
    if (membership && membership.role === params.role) return ok({ membership: presentMembership(membership, agent.handle, project.slug, params.view) });
    if (membership) {
      membership.role = params.role;
    } else {
      membership = em.create(Membership, { id: newId('mbr', now.getTime()), projectId: project.id, agentId: agent.id, role: params.role, isCreator: false, createdAt: now });
    }
    emit({ type: 'membership.added', projectSlug: project.slug, subjectId: agent.id, data: { handle: agent.handle, role: params.role } });
    touch(`memberships:${project.slug}`, 'projects', `agent:${agent.id}`);
    return ok({ membership: presentMembership(membership, agent.handle, project.slug, params.view) });
  },
});
