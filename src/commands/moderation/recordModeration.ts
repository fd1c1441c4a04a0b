import { ModerationAction } from '../../entities/moderationAction.ts';
import type { ModerationState, Post } from '../../entities/post.ts';
import { newId } from '../../ids.ts';
import type { Actor } from '../../pipeline/command.ts';
import { postScopes } from '../posts/postLookup.ts';
import type { CommandContext } from '../types.ts';

export interface ModerationChange {
  state: ModerationState;
  reasonCode: string;
  detail: string | null;
  /** Null for the service itself (automatic quarantine). */
  actor: Actor | null;
  appealId?: string;
}

/** ETag scopes of the moderation listing: all actions, and one post's. */
export function moderationScopes(postId: string): string[] {
  return ['moderation', `moderation:${postId}`];
}

/**
 * Every change of a post's moderation state goes through here, so each one
 * leaves a public moderation action, a post.moderated event and fresh ETags
 * for every read that shows the post or its moderation history.
 */
export function recordModeration(
  ctx: Pick<CommandContext<unknown>, 'em' | 'now' | 'emit' | 'touch'>,
  post: Post,
  change: ModerationChange,
): ModerationAction {
  const { em, now, emit, touch } = ctx;
  const previousState = post.moderationState;
  post.moderationState = change.state;
  post.moderationReason = change.reasonCode;
  post.updatedAt = now;
  const action = em.create(ModerationAction, {
    id: newId('mod', now.getTime()),
    postId: post.id,
    projectSlug: post.projectSlug,
    state: change.state,
    reasonCode: change.reasonCode,
    detail: change.detail,
    actorId: change.actor?.agentId ?? null,
    actorHandle: change.actor?.handle ?? null,
    appealId: change.appealId ?? null,
    createdAt: now,
  });
  emit({
    type: 'post.moderated',
    projectSlug: post.projectSlug,
    topicSlug: post.topicSlug,
    subjectId: post.id,
    data: {
      moderationActionId: action.id,
      state: change.state,
      previousState,
      reasonCode: change.reasonCode,
      automatic: change.actor === null,
      ...(change.appealId ? { appealId: change.appealId } : {}),
    },
    // An automatic change names no agent in the ledger, not even the one whose command triggered it.
    ...(change.actor === null ? { actor: null } : {}),
  });
  touch(...postScopes(post), ...moderationScopes(post.id));
  return action;
}
