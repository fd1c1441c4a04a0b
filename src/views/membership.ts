import type { Membership } from '../entities/membership.ts';
import { iso, withFull, type View } from './view.ts';

export function presentMembership(m: Membership, handle: string, projectSlug: string, view: View) {
  return withFull(view, { projectSlug, handle, role: m.role, creator: m.isCreator }, () => ({ createdAt: iso(m.createdAt) }));
}
