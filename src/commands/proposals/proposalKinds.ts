import type { EntityManager } from '@mikro-orm/postgresql';
import { canManageMemberships, canManageProject } from '../../domain/roles.ts';
import { Agent } from '../../entities/agent.ts';
import { Membership, type Role } from '../../entities/membership.ts';
import type { Project } from '../../entities/project.ts';
import type { ProposalChange, ProposalKind } from '../../entities/proposal.ts';
import { Topic } from '../../entities/topic.ts';
import { ApiError } from '../../errors.ts';
import { agentByHandle, topicById } from '../lookups.ts';
import { grantRole } from '../memberships/addMembership.ts';
import { revokeRole } from '../memberships/removeMembership.ts';
import { applyProjectUpdate } from '../projects/updateProject.ts';
import { insertTopic, topicSlugFor } from '../topics/createTopic.ts';
import { applyTopicChange } from '../topics/updateTopic.ts';
import type { CommandEffects } from '../types.ts';

export type ChangeField = keyof ProposalChange;

export interface KindRule {
  /** Parameters the kind requires and those it also accepts; any other change parameter is refused (400). */
  required: ChangeField[];
  optional: ChangeField[];
  /** Who may close a review that would apply it: whoever may make the change directly. */
  authority: (role: Role | null) => boolean;
  /** At creation: the targets must exist in the project (400 otherwise); answers the change as recorded. */
  resolve(em: EntityManager, project: Project, change: ProposalChange): Promise<ProposalChange>;
  /**
   * At adoption: the direct command's own rules and effects, minus its check
   * of the caller's role (the review's decision stands in for it). Every rule
   * refuses with an ApiError before it changes anything; that fails the proposal.
   */
  apply(effects: CommandEffects, project: Project, change: ProposalChange, proposerId: string): Promise<void>;
}

const unknownTarget = (field: ChangeField, issue: string) => new ApiError('invalid_request', `${field} ${issue}`, [{ field, issue }]);

/** A field the kind requires; the HTTP tier has already refused a proposal without it. */
function need<K extends ChangeField>(change: ProposalChange, field: K): NonNullable<ProposalChange[K]> {
  const value = change[field];
  if (value === undefined || value === null) throw new Error(`proposal change lacks ${field}`);
  return value as NonNullable<ProposalChange[K]>;
}

async function topicIn(em: EntityManager, project: Project, topicId: string): Promise<Topic> {
  const topic = await em.findOne(Topic, { id: topicId });
  if (!topic || topic.projectId !== project.id) throw unknownTarget('topicId', `is not a topic of ${project.slug}`);
  return topic;
}

async function registeredAgent(em: EntityManager, handle: string): Promise<Agent> {
  const agent = await em.findOne(Agent, { handle });
  if (!agent) throw unknownTarget('handle', 'is not a registered agent');
  return agent;
}

/** The topic kinds record the topic's slug beside its id, for readers. */
const topicChange = (field: 'title' | 'reviewMode', authority: KindRule['authority']): KindRule => ({
  required: ['topicId', field],
  optional: [],
  authority,
  async resolve(em, project, change) {
    const topic = await topicIn(em, project, need(change, 'topicId'));
    return { topicId: topic.id, topicSlug: topic.slug, [field]: need(change, field) };
  },
  async apply(effects, _project, change) {
    applyTopicChange(effects, await topicById(effects.em, need(change, 'topicId')), { [field]: need(change, field) });
  },
});

export const proposalKinds: Record<ProposalKind, KindRule> = {
  'project.update': {
    required: [],
    optional: ['name', 'summary'],
    authority: canManageProject,
    resolve: async (_em, _project, { name, summary }) => ({
      ...(name !== undefined ? { name } : {}),
      ...(summary !== undefined ? { summary } : {}),
    }),
    apply: async (effects, project, change) => applyProjectUpdate(effects, project, change),
  },
  'topic.create': {
    required: ['title'],
    optional: ['topicSlug', 'reviewMode'],
    authority: canManageProject,
    // The slug is fixed now, so the proposal shows the address the topic will have.
    resolve: async (_em, _project, change) => ({
      title: need(change, 'title'),
      topicSlug: topicSlugFor({ title: need(change, 'title'), topicSlug: change.topicSlug }),
      reviewMode: change.reviewMode ?? 'open',
    }),
    async apply(effects, project, change, proposerId) {
      await insertTopic(
        effects,
        project,
        { title: need(change, 'title'), topicSlug: need(change, 'topicSlug'), reviewMode: need(change, 'reviewMode') },
        proposerId,
      );
    },
  },
  'topic.update': topicChange('title', canManageProject),
  'topic.review-mode': topicChange('reviewMode', canManageProject),
  'membership.add': {
    required: ['handle'],
    optional: ['role'],
    authority: canManageMemberships,
    async resolve(em, _project, change) {
      const agent = await registeredAgent(em, need(change, 'handle'));
      return { handle: agent.handle, role: change.role ?? 'steward' };
    },
    async apply(effects, project, change) {
      await grantRole(effects, project, await agentByHandle(effects.em, need(change, 'handle')), need(change, 'role'));
    },
  },
  'membership.remove': {
    required: ['handle'],
    optional: [],
    authority: canManageMemberships,
    async resolve(em, project, change) {
      const agent = await registeredAgent(em, need(change, 'handle'));
      if (!(await em.findOne(Membership, { projectId: project.id, agentId: agent.id })))
        throw unknownTarget('handle', `is not an owner or steward of ${project.slug}`);
      return { handle: agent.handle };
    },
    async apply(effects, project, change) {
      await revokeRole(effects, project, await agentByHandle(effects.em, need(change, 'handle')));
    },
  },
};

/** Every change parameter any kind takes. */
const changeFields: ChangeField[] = [...new Set(Object.values(proposalKinds).flatMap((k) => [...k.required, ...k.optional]))];

/** The first problem of a change's parameters for its kind (missing or foreign), or null. */
export function changeParamIssue(
  kind: ProposalKind,
  given: Partial<Record<ChangeField, unknown>>,
): { field: string; issue: string } | null {
  const rule = proposalKinds[kind];
  const missing = rule.required.find((field) => given[field] === undefined);
  if (missing) return { field: missing, issue: `is required for kind ${kind}` };
  const foreign = changeFields.find(
    (field) => given[field] !== undefined && !rule.required.includes(field) && !rule.optional.includes(field),
  );
  if (foreign) return { field: foreign, issue: `is not a parameter of kind ${kind}` };
  if (rule.required.length === 0 && !rule.optional.some((field) => given[field] !== undefined))
    return { field: rule.optional.join(' or '), issue: `is required (at least one) for kind ${kind}` };
  return null;
}
