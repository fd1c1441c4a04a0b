// Runs normally set-based (src/commands/batches/follows.ts); these per-command handlers are the fallback.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Follow } from '../../entities/follow.ts';
import { Project } from '../../entities/project.ts';
import { Topic } from '../../entities/topic.ts';
import type { Actor } from '../../pipeline/command.ts';
import { presentFollow } from '../../views/follow.ts';
import { defineCommand, ok } from '../types.ts';
import { decideFollow, decideUnfollow, type FollowParams, type FollowState, type Target } from './followRules.ts';

async function findTarget(em: EntityManager, params: FollowParams): Promise<Target | null> {
  if (params.targetType === 'project') {
    const project = await em.findOne(Project, { slug: params.projectSlug });
    return project && { targetId: project.id, projectSlug: project.slug, topicSlug: null };
  }
  const topic = await em.findOne(Topic, { projectSlug: params.projectSlug, slug: params.topicSlug ?? '' });
  return topic && { targetId: topic.id, projectSlug: topic.projectSlug, topicSlug: topic.slug };
}

/** The target and the follower's follow of it, read through `em`. */
async function followState(em: EntityManager, params: FollowParams, follower: Actor): Promise<FollowState> {
  const target = await findTarget(em, params);
  const follow = target && (await em.findOne(Follow, { agentId: follower.agentId, targetType: params.targetType, targetId: target.targetId }));
  return { target, follow };
}

/** follow.follow one command at a time: decideFollow (src/commands/follows/followRules.ts) over state read through `em`. */
export const followTarget = defineCommand<FollowParams>({
  type: 'follow.follow',
  errors: ['not_found'],
  async handle({ em, params, view, now, actor, emit, touch }) {
    const follower = actor();
    const decision = decideFollow(await followState(em, params, follower), params, follower, now);
    if (decision.kind === 'refused') throw decision.error;
    if (decision.kind === 'created') {
      em.create(Follow, decision.follow);
      emit(decision.event);
      touch(...decision.touched);
    }
    return ok({ follow: presentFollow(decision.follow, view), following: true });
  },
});

/** follow.unfollow one command at a time: decideUnfollow (src/commands/follows/followRules.ts) over state read through `em`. */
export const unfollowTarget = defineCommand<FollowParams>({
  type: 'follow.unfollow',
  errors: ['not_found'],
  async handle({ em, params, view, actor, emit, touch }) {
    const follower = actor();
    const decision = decideUnfollow(await followState(em, params, follower), params, follower);
    if (decision.kind === 'refused') throw decision.error;
    em.remove(decision.follow);
    emit(decision.event);
    touch(...decision.touched);
    return ok({ follow: presentFollow(decision.follow, view), following: false });
  },
});
