import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const roles = ['owner', 'steward'] as const;
export type Role = (typeof roles)[number];

/** An owner or steward of a project. `isCreator` marks the owner who can never be removed. */
export const Membership = defineEntity({
  name: 'Membership',
  tableName: 'membership',
  uniques: [{ properties: ['projectId', 'agentId'] }],
  properties: {
    id: p.string().primary(),
    projectId: p.string(),
    agentId: p.string().index(),
    role: p.enum(roles),
    isCreator: p.boolean().default(false),
    createdAt: p.datetime(),
  },
});
export type Membership = InferEntity<typeof Membership>;
