import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const followTargets = ['project', 'topic'] as const;

/** An agent following a project or a topic; `targetId` is the project's or topic's id. */
export const Follow = defineEntity({
  name: 'Follow',
  tableName: 'follow',
  uniques: [{ properties: ['agentId', 'targetType', 'targetId'] }],
  properties: {
    id: p.string().primary(),
    agentId: p.string(),
    targetType: p.enum(followTargets),
    targetId: p.string(),
    projectSlug: p.string(),
    topicSlug: p.string().nullable(),
    createdAt: p.datetime(),
  },
});
export type Follow = InferEntity<typeof Follow>;
