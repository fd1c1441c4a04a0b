import { canModerate, canRemovePosts } from '../../domain/roles.ts';
import type { ModerationState } from '../../entities/post.ts';
import { forbidden } from '../../errors.ts';
import { presentModerationAction } from '../../views/moderationAction.ts';
import { presentPost } from '../../views/post.ts';
import { roleIn } from '../lookups.ts';
import { postById } from '../posts/postLookup.ts';
import { defineCommand, ok } from '../types.ts';
import { recordModeration } from './recordModeration.ts';

export interface SetModerationStateParams {
  postId: string;
  state: ModerationState;
  reasonCode: string;
  detail?: string;
}

/**
 * Owners and stewards of the post's project set any state; removal is
 * permanent for stewards: only an owner removes a post or brings it back.
 * Every set is recorded, even one that repeats the current state, since it
 * is an explicit public decision (a retry key makes a set safe to repeat).
 */
export const setModerationState = defineCommand<SetModerationStateParams>({
  type: 'moderation.set',
  errors: ['not_found', 'forbidden'],
  async handle(ctx) {
    const { em, params, view, actor } = ctx;
    const moderator = actor();
    const post = await postById(em, params.postId);
    const role = await roleIn(em, post.projectId, moderator.agentId);
    if (!canModerate(role)) throw forbidden('only owners and stewards of the post’s project moderate its posts');
    if (params.state === 'removed' && !canRemovePosts(role)) throw forbidden('permanent removal requires a project owner');
    if (post.moderationState === 'removed' && !canRemovePosts(role))
      throw forbidden('only a project owner changes the state of a removed post');
    const action = recordModeration(ctx, post, {
      state: params.state,
      reasonCode: params.reasonCode,
      detail: params.detail ?? null,
      actor: moderator,
    });
    return ok({ moderationAction: presentModerationAction(action, view), post: presentPost(post, view) });
  },
});
