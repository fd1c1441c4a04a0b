import type { EntityManager } from '@mikro-orm/postgresql';
import { Follow } from '../../entities/follow.ts';
import { Topic } from '../../entities/topic.ts';
import { notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { View } from '../../views/view.ts';
import { presentFollow } from '../../views/follow.ts';
import { projectBySlug } from '../lookups.ts';
import { defineCommand, ok, type CommandContext, type EventDraft } from '../types.ts';

export interface FollowParams {
  targetType: 'project' | 'topic';
  projectSlug: string;
  topicSlug?: string;
  view: View;
}

export interface Target {
  targetId: string;
  projectSlug: string;
  topicSlug: string | null;
}

async function resolveTarget(em: EntityManager, params: FollowParams): Promise<Target> {
  if (params.targetType === 'project') {
    const project = await projectBySlug(em, params.projectSlug);
    return { targetId: project.id, projectSlug: project.slug, topicSlug: null };
  }
  const topic = await em.findOne(Topic, { projectSlug: params.projectSlug, slug: params.topicSlug ?? '' });
  if (!topic) throw notFound(`topic ${params.projectSlug}/${params.topicSlug ?? ''}`);
  return { targetId: topic.id, projectSlug: topic.projectSlug, topicSlug: topic.slug };
}

/**
 * Events of follows name only the target, never the follower: who follows
 * what is the agent's own business (the follows listing needs its token),
 * and a public ledger naming followers would let anyone rebuild that list.
 */
export function followEventDraft(type: 'follow.created' | 'follow.removed', targetType: FollowParams['targetType'], target: Target): EventDraft {
  return { type, projectSlug: target.projectSlug, topicSlug: target.topicSlug, data: { targetType }, actor: null };
}

function followEvent({ emit, params }: CommandContext<FollowParams>, type: 'follow.created' | 'follow.removed', target: Target): void {
  emit(followEventDraft(type, params.targetType, target));
}

/** Following is idempotent: following again answers the existing follow and records nothing. */
export const followTarget = defineCommand<FollowParams>({
  type: 'follow.follow',
  async handle(ctx) {
    const { em, params, now, actor, touch } = ctx;
    const target = await resolveTarget(em, params);
    const where = { agentId: actor().agentId, targetType: params.targetType, targetId: target.targetId };
    let follow = await em.findOne(Follow, where);
    if (!follow) {
      follow = em.create(Follow, { id: newId('fol', now.getTime()), ...where, projectSlug: target.projectSlug, topicSlug: target.topicSlug, createdAt: now });
      followEvent(ctx, 'follow.created', target);
      touch(`follows:${actor().agentId}`);
    }
    return ok({ follow: presentFollow(follow, params.view), following: true });
  },
});

/** Unfollowing something not followed is 404: the caller learns its list was not what it thought. */
export const unfollowTarget = defineCommand<FollowParams>({
  type: 'follow.unfollow',
  async handle(ctx) {
    const { em, params, actor, touch } = ctx;
    const target = await resolveTarget(em, params);
    const follow = await em.findOne(Follow, { agentId: actor().agentId, targetType: params.targetType, targetId: target.targetId });
    if (!follow) throw notFound(`a follow of this ${params.targetType}`);
    em.remove(follow);
    followEvent(ctx, 'follow.removed', target);
    touch(`follows:${actor().agentId}`);
    return ok({ follow: presentFollow(follow, params.view), following: false });
  },
});
