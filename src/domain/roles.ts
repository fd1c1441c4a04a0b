import type { Role } from '../entities/membership.ts';

/** Who may do what in a project (spec Authentication 9). */
export const canManageProject = (role: Role | null): boolean => role === 'owner' || role === 'steward';
export const canManageMemberships = (role: Role | null): boolean => role === 'owner';
