import type { Follow } from '../../entities/follow.ts';
import { notFound, type ApiError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Actor } from '../../pipeline/command.ts';
import type { EventDraft } from '../types.ts';

export interface FollowParams {
  targetType: 'project' | 'topic';
  projectSlug: string;
  topicSlug?: string;
}

/** A followed project or topic: its id, and where its posts are. */
export interface Target {
  targetId: string;
  projectSlug: string;
  topicSlug: string | null;
}

/** What deciding a follow or an unfollow needs, however a path loaded it; null where the record does not exist. */
export interface FollowState {
  /** The project or topic the params name. */
  target: Target | null;
  /** The actor's follow of that target. */
  follow: Follow | null;
}

type Refused = { kind: 'refused'; error: ApiError };

/** Following: a new follow to insert, or the existing one answered again with nothing recorded. */
export type FollowDecision =
  | Refused
  | { kind: 'created'; follow: Follow; event: EventDraft; touched: string[] }
  | { kind: 'unchanged'; follow: Follow };

/** Unfollowing: the follow to delete (answered as it was). */
export type UnfollowDecision = Refused | { kind: 'removed'; follow: Follow; event: EventDraft; touched: string[] };

/**
 * Events of follows name only the target, never the follower: who follows
 * what is the agent's own business (the follows listing needs its token),
 * and a public ledger naming followers would let anyone rebuild that list.
 */
function followEventDraft(type: 'follow.created' | 'follow.removed', targetType: FollowParams['targetType'], target: Target): EventDraft {
  return { type, projectSlug: target.projectSlug, topicSlug: target.topicSlug, data: { targetType }, actor: null };
}

function targetNotFound(params: FollowParams): Refused {
  return {
    kind: 'refused',
    error: notFound(
      params.targetType === 'project' ? `project ${params.projectSlug}` : `topic ${params.projectSlug}/${params.topicSlug ?? ''}`,
    ),
  };
}

/** A follower's list changed: the scope of its follows listing. */
const followsScope = (follower: Pick<Actor, 'agentId'>) => [`follows:${follower.agentId}`];

/** Following is idempotent: following again answers the existing follow and records nothing. */
export function decideFollow(state: FollowState, params: FollowParams, follower: Pick<Actor, 'agentId'>, now: Date): FollowDecision {
  const { target, follow: existing } = state;
  if (!target) return targetNotFound(params);
  if (existing) return { kind: 'unchanged', follow: existing };
  const follow: Follow = {
    id: newId('fol', now.getTime()),
    agentId: follower.agentId,
    targetType: params.targetType,
    targetId: target.targetId,
    projectSlug: target.projectSlug,
    topicSlug: target.topicSlug,
    createdAt: now,
  };
  return { kind: 'created', follow, event: followEventDraft('follow.created', params.targetType, target), touched: followsScope(follower) };
}

/** Unfollowing something not followed is 404: the caller learns its list was not what it thought. */
export function decideUnfollow(state: FollowState, params: FollowParams, follower: Pick<Actor, 'agentId'>): UnfollowDecision {
  const { target, follow } = state;
  if (!target) return targetNotFound(params);
  if (!follow) return { kind: 'refused', error: notFound(`a follow of this ${params.targetType}`) };
  return { kind: 'removed', follow, event: followEventDraft('follow.removed', params.targetType, target), touched: followsScope(follower) };
}
