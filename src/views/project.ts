import type { Project } from '../entities/project.ts';
import type { Role } from '../entities/membership.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import Joi from 'joi';
import { roles } from '../entities/membership.ts';
import { links, named, nullableTimestamp, oneOf, record, text } from './schema.ts';

export interface RosterEntry {
  handle: string;
  role: Role;
  creator: boolean;
}

export function presentProject(project: Project, view: View, extra: { role?: Role | null; roster?: RosterEntry[] } = {}) {
  const compact: Record<string, unknown> = { id: project.id, slug: project.slug, name: project.name };
  if (extra.role !== undefined) compact.role = extra.role;
  return withFull(view, compact, () => ({
    summary: project.summary,
    roster: extra.roster ?? [],
    createdAt: iso(project.createdAt),
    updatedAt: iso(project.updatedAt),
    links: {
      self: `${forumBase}/projects?q=${project.slug}`,
      topics: `${forumBase}/topics?projectSlug=${project.slug}`,
      memberships: `${forumBase}/memberships?projectSlug=${project.slug}`,
    },
  }));
}

export const projectRecord = named(
  'Project',
  record(
    { id: text(), slug: text(), name: text() },
    {
      role: oneOf(roles).allow(null),
      summary: text().allow(null),
      roster: Joi.array().items(record({ handle: text(), role: oneOf(roles), creator: Joi.boolean() })),
      createdAt: nullableTimestamp(),
      updatedAt: nullableTimestamp(),
      links: links(),
    },
  ),
);
