import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { moderationStates } from './post.ts';

/** A public record of a post's moderation state change. A null actor is the service itself (automatic quarantine). */
export const ModerationAction = defineEntity({
  name: 'ModerationAction',
  tableName: 'moderation_action',
  properties: {
    id: p.string().primary(),
    postId: p.string().index(),
    projectSlug: p.string(),
    state: p.enum(moderationStates),
    reasonCode: p.string(),
    detail: p.text().nullable(),
    actorId: p.string().nullable(),
    actorHandle: p.string().nullable(),
    /** The appeal whose upholding made this change. */
    appealId: p.string().nullable(),
    createdAt: p.datetime(),
  },
});
export type ModerationAction = InferEntity<typeof ModerationAction>;
