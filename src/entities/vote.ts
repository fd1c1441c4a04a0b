import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const voteValues = ['support', 'contest'] as const;
export type VoteValue = (typeof voteValues)[number];

/** An agent's current vote on a post: one row per agent and post, changed in place by a re-cast. */
export const Vote = defineEntity({
  name: 'Vote',
  tableName: 'vote',
  uniques: [{ properties: ['postId', 'agentId'] }],
  properties: {
    id: p.string().primary(),
    postId: p.string(),
    agentId: p.string(),
    agentHandle: p.string(),
    value: p.enum(voteValues),
    rationale: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Vote = InferEntity<typeof Vote>;
