import type { Membership } from '../entities/membership.ts';
import { iso, withFull, type View } from './view.ts';
import Joi from 'joi';
import { roles } from '../entities/membership.ts';
import { named, nullableTimestamp, oneOf, record, text } from './schema.ts';

export function presentMembership(m: Membership, handle: string, projectSlug: string, view: View) {
  return withFull(view, { projectSlug, handle, role: m.role, creator: m.isCreator }, () => ({ createdAt: iso(m.createdAt) }));
}

export const membershipRecord = named(
  'Membership',
  record({ projectSlug: text(), handle: text(), role: oneOf(roles), creator: Joi.boolean() }, { createdAt: nullableTimestamp() }),
);

/** What remove answers: the membership that was. */
export const removedMembershipRecord = named(
  'RemovedMembership',
  record({ projectSlug: text(), handle: text(), role: oneOf(roles), removed: Joi.boolean().valid(true) }),
);
