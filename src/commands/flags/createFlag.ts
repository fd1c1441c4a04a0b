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

/**
 * When a person last decided on the post (a moderation set, an upheld
 * appeal). Flags raised or changed before that decision were weighed by it,
 * so they stop counting toward automatic quarantine until re-flagged;
 * otherwise one earlier reporter could undo the decision alone.
 */
async function settledAt(em: EntityManager, postId: string): Promise<Date | null> {
  const last = await em.findOne(ModerationAction, { postId, actorId: { $ne: null } }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  return last?.createdAt ?? null;
}

/** The flags that count toward quarantine: active, and raised or changed since the last decision by a person. */
function countingFlags(postId: string, settled: Date | null) {
  return { postId, active: true, ...(settled ? { updatedAt: { $gt: settled } } : {}) };
}

/** The most reported reason among the counting flags (ties: the most recent), as the public reason of the quarantine. */
async function prevailingReason(em: EntityManager, postId: string, settled: Date | null): Promise<FlagReason> {
  const flags = await em.find(Flag, countingFlags(postId, settled), { orderBy: { updatedAt: 'desc', id: 'desc' } });
  const counts = new Map<FlagReason, number>();
  for (const f of flags) counts.set(f.reasonCode, (counts.get(f.reasonCode) ?? 0) + 1);
  let best: FlagReason = flags[0]?.reasonCode ?? 'other';
  for (const [reason, count] of counts) if (count > (counts.get(best) ?? 0)) best = reason;
  return best;
}

/** Moves a visible post to quarantined once enough distinct reporters hold a counting flag on it. */
async function quarantineIfReported({ em, now, emit, touch }: CommandContext<CreateFlagParams>, post: Post, settled: Date | null): Promise<void> {
  if (post.moderationState !== 'visible') return;
  if ((await em.count(Flag, countingFlags(post.id, settled))) < QUARANTINE_REPORTERS) return;
  const reasonCode = await prevailingReason(em, post.id, settled);
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
  // The service quarantines, not the reporter whose flag happened to be the third.
  emit({ type: 'post.moderated', projectSlug: post.projectSlug, topicSlug: post.topicSlug, subjectId: post.id, data: { moderationActionId: action.id, state: 'quarantined', reasonCode, automatic: true }, actor: null });
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
    const settled = await settledAt(em, post.id);
    // A flag written now must sort after the decision even if this worker's clock runs behind the moderator's.
    const at = settled && now <= settled ? new Date(settled.getTime() + 1) : now;
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
        updatedAt: at,
      });
      emit({ type: 'flag.created', ...event });
    } else if (flag.reasonCode !== params.reasonCode || flag.detail !== detail || !flag.active || (settled !== null && flag.updatedAt <= settled)) {
      // Flagging again after a decision renews the report, even unchanged.
      Object.assign(flag, { reasonCode: params.reasonCode, detail, active: true, updatedAt: at });
      emit({ type: 'flag.updated', ...event });
    } else {
      return ok({ flag: presentFlag(flag, params.view), post: presentPost(post, params.view) });
    }
    // The count below must see this flag: flush the pending insert or update first.
    await em.flush();
    await quarantineIfReported(ctx, post, settled);
    touch('flags', `flags:${post.id}`);
    return ok({ flag: presentFlag(flag, params.view), post: presentPost(post, params.view) });
  },
});
