import type { Role } from '../entities/membership.ts';

/** Who may do what in a project (spec Authentication 9). */
export const canManageProject = (role: Role | null): boolean => role === 'owner' || role === 'steward';
export const canManageMemberships = (role: Role | null): boolean => role === 'owner';
/** Stewards moderate and decide appeals; moving a post into or out of `removed` is an owner's alone. */
export const canModerate = (role: Role | null): boolean => role === 'owner' || role === 'steward';
export const canRemovePosts = (role: Role | null): boolean => role === 'owner';
