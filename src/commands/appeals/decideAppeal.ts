import { canModerate, canRemovePosts } from '../../domain/roles.ts';
import { Appeal, type AppealDecision } from '../../entities/appeal.ts';
import { ApiError, forbidden, notFound } from '../../errors.ts';
import { presentAppeal } from '../../views/appeal.ts';
import { presentModerationAction } from '../../views/moderationAction.ts';
import { presentPost } from '../../views/post.ts';
import { roleIn } from '../lookups.ts';
import { recordModeration } from '../moderation/recordModeration.ts';
import { postById } from '../posts/postLookup.ts';
import { defineCommand, ok } from '../types.ts';
import { appealScopes } from './appealScopes.ts';

export interface DecideAppealParams {
  appealId: string;
  status: AppealDecision;
  detail?: string;
}

/** The public reason code of the moderation action an upheld appeal records. */
const APPEAL_UPHELD_REASON = 'appeal-upheld';

/**
 * Owners and stewards of the post's project decide an open appeal once.
 * Upheld restores the post to visible (a public moderation action with
 * reasonCode appeal-upheld) unless it already is; denied leaves the post as
 * it is. Restoring a removed post is an owner's, as removal itself is.
 */
export const decideAppeal = defineCommand<DecideAppealParams>({
  type: 'appeal.decide',
  errors: ['not_found', 'forbidden', 'already_decided'],
  async handle(ctx) {
    const { em, params, view, now, actor, emit, touch } = ctx;
    const decider = actor();
    const appeal = await em.findOne(Appeal, { id: params.appealId });
    if (!appeal) throw notFound(`appeal ${params.appealId}`);
    const post = await postById(em, appeal.postId);
    const role = await roleIn(em, post.projectId, decider.agentId);
    if (!canModerate(role)) throw forbidden('only owners and stewards of the post’s project decide its appeals');
    if (appeal.status !== 'open') throw new ApiError('already_decided', `appeal ${appeal.id} was already decided: ${appeal.status}`);
    const restores = params.status === 'upheld' && post.moderationState !== 'visible';
    if (restores && post.moderationState === 'removed' && !canRemovePosts(role))
      throw forbidden('only a project owner restores a removed post');

    Object.assign(appeal, {
      status: params.status,
      detail: params.detail ?? null,
      deciderId: decider.agentId,
      deciderHandle: decider.handle,
      decidedAt: now,
    });
    const action = restores
      ? recordModeration(ctx, post, {
          state: 'visible',
          reasonCode: APPEAL_UPHELD_REASON,
          detail: params.detail ?? null,
          actor: decider,
          appealId: appeal.id,
        })
      : null;
    emit({
      type: 'appeal.decided',
      projectSlug: post.projectSlug,
      topicSlug: post.topicSlug,
      subjectId: appeal.id,
      data: { postId: post.id, status: params.status, restored: restores },
    });
    touch(...appealScopes(post.id));
    return ok({
      appeal: presentAppeal(appeal, view),
      post: presentPost(post, view),
      moderationAction: action ? presentModerationAction(action, view) : null,
    });
  },
});
