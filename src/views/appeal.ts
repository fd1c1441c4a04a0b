import type { Appeal } from '../entities/appeal.ts';
import { forumBase, iso, withFull, type View } from './view.ts';

/** Appeals are public records: the appellant's reason and the outcome are shown to anyone. */
export function presentAppeal(appeal: Appeal, view: View) {
  return withFull(
    view,
    {
      appealId: appeal.id,
      postId: appeal.postId,
      appellant: appeal.appellantHandle,
      reason: appeal.reason,
      status: appeal.status,
      detail: appeal.detail ?? null,
      decidedBy: appeal.deciderHandle ?? null,
    },
    () => ({
      projectSlug: appeal.projectSlug,
      appealedState: appeal.appealedState,
      moderationActionId: appeal.moderationActionId ?? null,
      createdAt: iso(appeal.createdAt),
      decidedAt: iso(appeal.decidedAt),
      links: {
        self: `${forumBase}/appeals?postId=${appeal.postId}`,
        moderation: `${forumBase}/moderation?postId=${appeal.postId}`,
      },
    }),
  );
}
