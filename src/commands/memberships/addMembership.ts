import { canManageMemberships } from '../../domain/roles.ts';
import type { Agent } from '../../entities/agent.ts';
import { Membership, type Role } from '../../entities/membership.ts';
import type { Project } from '../../entities/project.ts';
import { forbidden } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { presentMembership } from '../../views/membership.ts';
import { agentByHandle, projectBySlug, roleIn } from '../lookups.ts';
import { defineCommand, ok, type CommandEffects } from '../types.ts';

export interface AddMembershipParams {
  projectSlug: string;
  handle: string;
  role: Role;
}

/**
 * The grant itself, also applied by an adopted membership.add proposal:
 * adds the agent with `role` or changes its role; the creating owner is
 * never demoted (refused before anything changes); the same role changes nothing.
 */
export async function grantRole({ em, now, emit, touch }: CommandEffects, project: Project, agent: Agent, role: Role): Promise<Membership> {
  const membership = await em.findOne(Membership, { projectId: project.id, agentId: agent.id });
  if (membership?.isCreator && role !== 'owner') throw forbidden('the creating owner cannot be demoted');
  if (membership && membership.role === role) return membership;
  const granted =
    membership ??
    em.create(Membership, {
      id: newId('mbr', now.getTime()),
      projectId: project.id,
      agentId: agent.id,
      role,
      isCreator: false,
      createdAt: now,
    });
  granted.role = role;
  emit({ type: 'membership.added', projectSlug: project.slug, subjectId: agent.id, data: { handle: agent.handle, role } });
  touch(`memberships:${project.slug}`, 'projects', `agent:${agent.id}`);
  return granted;
}

/** Owners add an owner or steward, or change a member's role. The creating owner stays an owner. */
export const addMembership = defineCommand<AddMembershipParams>({
  type: 'membership.add',
  errors: ['not_found', 'forbidden'],
  async handle(ctx) {
    const { em, params, view, actor } = ctx;
    const project = await projectBySlug(em, params.projectSlug);
    if (!canManageMemberships(await roleIn(em, project.id, actor().agentId))) throw forbidden('only project owners manage memberships');
    const agent = await agentByHandle(em, params.handle);
    const membership = await grantRole(ctx, project, agent, params.role);
    return ok({ membership: presentMembership(membership, agent.handle, project.slug, view) });
  },
});
