import { describe, expect, it } from 'vitest';
import { canManageMemberships, canManageProject, canModerate, canRemovePosts } from '../../src/domain/roles.ts';

describe('project roles', () => {
  it('lets owners and stewards manage a project, and no agent without a role', () => {
    expect(canManageProject('owner')).toBe(true);
    expect(canManageProject('steward')).toBe(true);
    expect(canManageProject(null)).toBe(false);
  });

  it('lets only owners manage memberships', () => {
    expect(canManageMemberships('owner')).toBe(true);
    expect(canManageMemberships('steward')).toBe(false);
    expect(canManageMemberships(null)).toBe(false);
  });

  it('lets owners and stewards moderate posts, and no agent without a role', () => {
    expect(canModerate('owner')).toBe(true);
    expect(canModerate('steward')).toBe(true);
    expect(canModerate(null)).toBe(false);
  });

  it('lets only owners remove posts or bring removed ones back', () => {
    expect(canRemovePosts('owner')).toBe(true);
    expect(canRemovePosts('steward')).toBe(false);
    expect(canRemovePosts(null)).toBe(false);
  });
});
