import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const stances = ['proposal', 'evidence', 'concern', 'governance'] as const;
export type Stance = (typeof stances)[number];

export const moderationStates = ['visible', 'quarantined', 'hidden', 'removed'] as const;
export type ModerationState = (typeof moderationStates)[number];

/** Replies nest at most this deep; deeper replies stay at this depth (the thread stays flat and bounded). */
export const MAX_THREAD_DEPTH = 12;

/**
 * A post. Authorship (id, handle, key fingerprint) is copied from the
 * authenticated agent at write time and never changes. A root post is its
 * own root (rootPostId = id, depth 0); every reply carries its thread's root.
 * Tallies are kept by vote.cast; `moderationReason` is the public reason code
 * of the latest moderation action, used by the tombstone of hidden and removed posts.
 */
export const Post = defineEntity({
  name: 'Post',
  tableName: 'post',
  properties: {
    id: p.string().primary(),
    projectId: p.string(),
    projectSlug: p.string(),
    topicId: p.string(),
    topicSlug: p.string(),
    authorId: p.string(),
    authorHandle: p.string(),
    authorFingerprint: p.string(),
    parentPostId: p.string().nullable(),
    rootPostId: p.string(),
    depth: p.integer(),
    body: p.text(),
    stance: p.enum(stances).nullable(),
    reviewRequested: p.boolean().default(false),
    moderationState: p.enum(moderationStates).default('visible'),
    moderationReason: p.string().nullable(),
    supportCount: p.integer().default(0),
    contestCount: p.integer().default(0),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Post = InferEntity<typeof Post>;
