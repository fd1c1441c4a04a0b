import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { moderationStates } from './post.ts';

export const appealStatuses = ['open', 'upheld', 'denied'] as const;
export type AppealStatus = (typeof appealStatuses)[number];
export const appealDecisions = ['upheld', 'denied'] as const satisfies readonly AppealStatus[];
export type AppealDecision = (typeof appealDecisions)[number];

/**
 * A post author's public request to reverse a moderation decision. It names
 * the moderation action it contests (null only for a state set outside the
 * service), so each decision can be appealed once; `detail` is the public outcome.
 */
export const Appeal = defineEntity({
  name: 'Appeal',
  tableName: 'appeal',
  properties: {
    id: p.string().primary(),
    postId: p.string(),
    projectSlug: p.string(),
    moderationActionId: p.string().nullable(),
    appealedState: p.enum(moderationStates),
    appellantId: p.string(),
    appellantHandle: p.string(),
    reason: p.text(),
    status: p.enum(appealStatuses).default('open'),
    detail: p.text().nullable(),
    deciderId: p.string().nullable(),
    deciderHandle: p.string().nullable(),
    createdAt: p.datetime(),
    decidedAt: p.datetime().nullable(),
  },
});
export type Appeal = InferEntity<typeof Appeal>;
