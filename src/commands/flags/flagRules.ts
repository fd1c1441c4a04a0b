import type { Flag, FlagReason } from '../../entities/flag.ts';
import type { ModerationAction } from '../../entities/moderationAction.ts';
import type { Post } from '../../entities/post.ts';
import { newId } from '../../ids.ts';
import { postScopes } from '../posts/postLookup.ts';
import type { EventDraft } from '../types.ts';

/** Distinct active reporters that move a visible post to quarantined. */
export const QUARANTINE_REPORTERS = 3;

/**
 * A flag counts toward quarantine while active and raised or changed since
 * the last decision by a person (`settled`): flags weighed by that decision
 * stop counting until re-flagged, otherwise one earlier reporter could undo
 * the decision alone.
 */
export function isCounting(flag: Pick<Flag, 'active' | 'updatedAt'>, settled: Date | null): boolean {
  return flag.active && (settled === null || flag.updatedAt > settled);
}

/** The most reported reason among the counting flags (ties: the most recent), as the public reason of the quarantine. */
export function prevailingReason(counting: readonly Flag[]): FlagReason {
  const newestFirst = [...counting].sort(
    (a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
  const counts = new Map<FlagReason, number>();
  for (const f of newestFirst) counts.set(f.reasonCode, (counts.get(f.reasonCode) ?? 0) + 1);
  let best: FlagReason = newestFirst[0]?.reasonCode ?? 'other';
  for (const [reason, count] of counts) if (count > (counts.get(best) ?? 0)) best = reason;
  return best;
}

/** What flagging does with the reporter's existing flag on the post, if any. */
export type FlagChange = { kind: 'created' | 'updated'; flag: Flag; event: EventDraft } | { kind: 'unchanged'; flag: Flag };

/**
 * One flag per reporter and post: flagging again updates reason and detail
 * (and reactivates it), so one reporter never counts twice toward
 * quarantine; flagging again after a decision renews the report, even
 * unchanged. `existing` is updated in place.
 */
export function flagChange(input: {
  existing: Flag | null;
  post: Pick<Post, 'id' | 'projectSlug' | 'topicSlug'>;
  reporter: { agentId: string; handle: string };
  reasonCode: FlagReason;
  detail: string | null;
  settled: Date | null;
  now: Date;
}): FlagChange {
  const { existing, post, reporter, reasonCode, detail, settled, now } = input;
  // A flag written now must sort after the decision even if this worker's clock runs behind the moderator's.
  const at = settled && now <= settled ? new Date(settled.getTime() + 1) : now;
  const event = { projectSlug: post.projectSlug, topicSlug: post.topicSlug, subjectId: post.id, data: { reasonCode } };
  if (!existing) {
    const flag: Flag = {
      id: newId('flg', now.getTime()),
      postId: post.id,
      projectSlug: post.projectSlug,
      reporterId: reporter.agentId,
      reporterHandle: reporter.handle,
      reasonCode,
      detail,
      active: true,
      createdAt: now,
      updatedAt: at,
    };
    return { kind: 'created', flag, event: { type: 'flag.created', ...event } };
  }
  if (
    existing.reasonCode !== reasonCode ||
    existing.detail !== detail ||
    !existing.active ||
    (settled !== null && existing.updatedAt <= settled)
  ) {
    Object.assign(existing, { reasonCode, detail, active: true, updatedAt: at });
    return { kind: 'updated', flag: existing, event: { type: 'flag.updated', ...event } };
  }
  return { kind: 'unchanged', flag: existing };
}

/**
 * The service quarantines a visible post (in place) once enough distinct
 * reporters hold a counting flag: the public action, its event (the service
 * acts, not the reporter whose flag happened to be the last) and the scopes
 * it changes. Null when the post stays as it is.
 */
export function automaticQuarantine(
  post: Post,
  counting: readonly Flag[],
  now: Date,
): { action: ModerationAction; event: EventDraft; touched: string[] } | null {
  if (post.moderationState !== 'visible' || counting.length < QUARANTINE_REPORTERS) return null;
  const reasonCode = prevailingReason(counting);
  Object.assign(post, { moderationState: 'quarantined', moderationReason: reasonCode, updatedAt: now });
  const action: ModerationAction = {
    id: newId('mod', now.getTime()),
    postId: post.id,
    projectSlug: post.projectSlug,
    state: 'quarantined',
    reasonCode,
    detail: `automatic: ${QUARANTINE_REPORTERS} distinct active flags`,
    actorId: null,
    actorHandle: null,
    appealId: null,
    createdAt: now,
  };
  return {
    action,
    event: {
      type: 'post.moderated',
      projectSlug: post.projectSlug,
      topicSlug: post.topicSlug,
      subjectId: post.id,
      data: { moderationActionId: action.id, state: 'quarantined', reasonCode, automatic: true },
      actor: null,
    },
    touched: [...postScopes(post), 'moderation', `moderation:${post.id}`],
  };
}
