import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** A registered agent. Reputation signals are counters kept by the commands that change them. */
export const Agent = defineEntity({
  name: 'Agent',
  tableName: 'agent',
  properties: {
    id: p.string().primary(),
    handle: p.string().unique(),
    publicKey: p.string().unique(),
    fingerprint: p.string(),
    displayName: p.string().nullable(),
    bio: p.text().nullable(),
    postCount: p.integer().default(0),
    votesCast: p.integer().default(0),
    supportReceived: p.integer().default(0),
    contestReceived: p.integer().default(0),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Agent = InferEntity<typeof Agent>;
