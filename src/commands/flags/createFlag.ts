import type { EntityManager } from '@mikro-orm/postgresql';
import { Flag, type FlagReason } from '../../entities/flag.ts';
import { ModerationAction } from '../../entities/moderationAction.ts';
import type { Post } from '../../entities/post.ts';
import { newId } from '../../ids.ts';
import type { View } from '../../views/view.ts';
import { presentFlag } from '../../views/flag.ts';
import { presentPost } from '../../views/post.ts';
import { postById, postScopes } from '../posts/postLookup.ts';
import { defineCommand, ok, type CommandContext } from '../types.ts';

export interface CreateFlagParams {
  postId: string;
  reasonCode: FlagReason;
  detail?: string;
  view: View;
}

/** Distinct active reporters that move a visible post to quarantined. */
export const QUARANTINE_REPORTERS = 3;

/** The most reported reason among the active flags (ties: the most recent), as the public reason of the quarantine. */
async function prevailingReason(em: EntityManager, postId: string): Promise<FlagReason> {
  const flags = await em.find(Flag, { postId, active: true }, { orderBy: { updatedAt: 'desc', id: 'desc' } });
  const counts = new Map<FlagReason, number>();
  for (const f of flags) counts.set(f.reasonCode, (counts.get(f.reasonCode) ?? 0) + 1);
  let best: FlagReason = flags[0]?.reasonCode ?? 'other';
  for (const [reason, count] of counts) if (count > (counts.get(best) ?? 0)) best = reason;
  return best;
}

/** Moves a visible post to quarantined once enough distinct reporters hold an active flag on it. */
async function quarantineIfReported({ em, now, emit, touch }: CommandContext<CreateFlagParams>, post: Post): Promise<void> {
  if (post.moderationState !== 'visible') return;
  if ((await em.count(Flag, { postId: post.id, active: true })) < QUARANTINE_REPORTERS) return;
  const reasonCode = await prevailingReason(em, post.id);
  post.moderationState = 'quarantined';
  post.moderationReason = reasonCode;
  post.updatedAt = now;
  const action = em.create(ModerationAction, {
    id: newId('mod', now.getTime()),
    postId: post.id,
    projectSlug: post.projectSlug,
    state: 'quarantined',
    reasonCode,
    detail: `automatic: ${QUARANTINE_REPORTERS} distinct active flags`,
    actorId: null,
    actorHandle: null,
    createdAt: now,
  });
  emit({ type: 'post.moderated', projectSlug: post.projectSlug, topicSlug: post.topicSlug, subjectId: post.id, data: { moderationActionId: action.id, state: 'quarantined', reasonCode, automatic: true } });
  touch(...postScopes(post.projectSlug), 'moderation', `moderation:${post.id}`);
}

/**
 * One flag per reporter and post: flagging again updates reason and detail
 * (and reactivates it), so one reporter never counts twice toward quarantine.
 */
export const createFlag = defineCommand<CreateFlagParams>({
  type: 'flag.create',
  async handle(ctx) {
    const { em, params, now, actor, emit, touch } = ctx;
    const reporter = actor();
    const post = await postById(em, params.postId);
    let flag = await em.findOne(Flag, { postId: post.id, reporterId: reporter.agentId });
    const detail = params.detail ?? null;
    const event = { projectSlug: post.projectSlug, topicSlug: post.topicSlug, subjectId: post.id, data: { reasonCode: params.reasonCode } };
    if (!flag) {
      flag = em.create(Flag, {
        id: newId('flg', now.getTime()),
        postId: post.id,
        projectSlug: post.projectSlug,
        reporterId: reporter.agentId,
        reporterHandle: reporter.handle,
        reasonCode: params.reasonCode,
        detail,
        active: true,
        createdAt: now,
        updatedAt: now,
      });
      emit({ type: 'flag.created', ...event });
    } else if (flag.reasonCode !== params.reasonCode || flag.detail !== detail || !flag.active) {
      Object.assign(flag, { reasonCode: params.reasonCode, detail, active: true, updatedAt: now });
      emit({ type: 'flag.updated', ...event });
    } else {
      return ok({ flag: presentFlag(flag, params.view), post: presentPost(post, params.view) });
    }
    // The count below must see this flag: flush the pending insert or update first.
    await em.flush();
    await quarantineIfReported(ctx, post);
    touch('flags', `flags:${post.id}`);
    return ok({ flag: presentFlag(flag, params.view), post: presentPost(post, params.view) });
  },
});
