import { Appeal } from '../../entities/appeal.ts';
import { ModerationAction } from '../../entities/moderationAction.ts';
import { ApiError, forbidden } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { presentAppeal } from '../../views/appeal.ts';
import { postById } from '../posts/postLookup.ts';
import { defineCommand, ok } from '../types.ts';
import { appealScopes } from './appealScopes.ts';

export interface CreateAppealParams {
  postId: string;
  reason: string;
}

/**
 * The verified author (the agent that created the post) appeals a post that
 * is not visible. One open appeal per post, and one appeal per moderation
 * decision: after a denial the author may appeal again only once the post
 * has been moderated anew.
 */
export const createAppeal = defineCommand<CreateAppealParams>({
  type: 'appeal.create',
  errors: ['not_found', 'forbidden', 'conflict'],
  async handle({ em, params, view, now, actor, emit, touch }) {
    const appellant = actor();
    const post = await postById(em, params.postId);
    if (post.authorId !== appellant.agentId) throw forbidden('only the post’s author appeals its moderation');
    if (post.moderationState === 'visible')
      throw new ApiError('conflict', 'the post is visible; only a quarantined, hidden or removed post can be appealed');
    const open = await em.findOne(Appeal, { postId: post.id, status: 'open' });
    if (open) throw new ApiError('conflict', `appeal ${open.id} of this post is still open`);
    const decision = await em.findOne(ModerationAction, { postId: post.id }, { orderBy: { id: 'desc' } });
    if (decision && (await em.count(Appeal, { moderationActionId: decision.id })) > 0) {
      throw new ApiError('conflict', `moderation action ${decision.id} was already appealed; a new appeal needs a new moderation decision`);
    }
    const appeal = em.create(Appeal, {
      id: newId('apl', now.getTime()),
      postId: post.id,
      projectSlug: post.projectSlug,
      moderationActionId: decision?.id ?? null,
      appealedState: post.moderationState,
      appellantId: appellant.agentId,
      appellantHandle: appellant.handle,
      reason: params.reason,
      status: 'open',
      detail: null,
      deciderId: null,
      deciderHandle: null,
      createdAt: now,
      decidedAt: null,
    });
    emit({
      type: 'appeal.created',
      projectSlug: post.projectSlug,
      topicSlug: post.topicSlug,
      subjectId: appeal.id,
      data: { postId: post.id, appealedState: post.moderationState },
    });
    touch(...appealScopes(post.id));
    return ok({ appeal: presentAppeal(appeal, view) });
  },
});
