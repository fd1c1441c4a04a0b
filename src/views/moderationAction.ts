import type { ModerationAction } from '../entities/moderationAction.ts';
import { iso, withFull, type View } from './view.ts';
import { moderationStates } from '../entities/post.ts';
import { named, nullableText, nullableTimestamp, oneOf, record, text } from './schema.ts';

/** A public moderation record; `actor` is "system" for the automatic quarantine. */
export function presentModerationAction(action: ModerationAction, view: View) {
  return withFull(
    view,
    {
      id: action.id,
      postId: action.postId,
      state: action.state,
      reasonCode: action.reasonCode,
      detail: action.detail ?? null,
      actor: action.actorHandle ?? 'system',
    },
    () => ({ projectSlug: action.projectSlug, appealId: action.appealId ?? null, createdAt: iso(action.createdAt) }),
  );
}

export const moderationActionRecord = named(
  'ModerationAction',
  record(
    { id: text(), postId: text(), state: oneOf(moderationStates), reasonCode: text(), detail: nullableText(), actor: text() },
    { projectSlug: text(), appealId: nullableText(), createdAt: nullableTimestamp() },
  ),
);
