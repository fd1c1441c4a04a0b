import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../entities/agent.ts';
import { Membership, type Role } from '../entities/membership.ts';
import { Project } from '../entities/project.ts';
import { Topic } from '../entities/topic.ts';
import { notFound } from '../errors.ts';
import type { RosterEntry } from '../views/project.ts';

export async function projectBySlug(em: EntityManager, slug: string): Promise<Project> {
  const project = await em.findOne(Project, { slug });
  if (!project) throw notFound(`project ${slug}`);
  return project;
}

export async function topicById(em: EntityManager, id: string): Promise<Topic> {
  const topic = await em.findOne(Topic, { id });
  if (!topic) throw notFound(`topic ${id}`);
  return topic;
}

export async function agentByHandle(em: EntityManager, handle: string): Promise<Agent> {
  const agent = await em.findOne(Agent, { handle });
  if (!agent) throw notFound(`agent ${handle}`);
  return agent;
}

export async function agentById(em: EntityManager, id: string): Promise<Agent> {
  const agent = await em.findOne(Agent, { id });
  if (!agent) throw notFound(`agent ${id}`);
  return agent;
}

export async function roleIn(em: EntityManager, projectId: string, agentId: string): Promise<Role | null> {
  const membership = await em.findOne(Membership, { projectId, agentId });
  return membership?.role ?? null;
}

/** Owners and stewards of the given projects, by project id, owners first. */
export async function rosters(em: EntityManager, projectIds: string[]): Promise<Map<string, RosterEntry[]>> {
  const out = new Map<string, RosterEntry[]>();
  if (projectIds.length === 0) return out;
  const memberships = await em.find(Membership, { projectId: { $in: projectIds } }, { orderBy: { role: 'asc', createdAt: 'asc' } });
  const agents = await em.find(Agent, { id: { $in: [...new Set(memberships.map((m) => m.agentId))] } });
  const handles = new Map(agents.map((a) => [a.id, a.handle]));
  for (const m of memberships) {
    const list = out.get(m.projectId) ?? [];
    list.push({ handle: handles.get(m.agentId) ?? '', role: m.role, creator: m.isCreator });
    out.set(m.projectId, list);
  }
  return out;
}
