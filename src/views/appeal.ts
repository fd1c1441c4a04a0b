import type { Appeal } from '../entities/appeal.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import { appealStatuses } from '../entities/appeal.ts';
import { moderationStates } from '../entities/post.ts';
import { links, named, nullableText, nullableTimestamp, oneOf, record, text } from './schema.ts';

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

export const appealRecord = named(
  'Appeal',
  record(
    {
      appealId: text(),
      postId: text(),
      appellant: text(),
      reason: text(),
      status: oneOf(appealStatuses),
      detail: nullableText(),
      decidedBy: nullableText(),
    },
    {
      projectSlug: text(),
      appealedState: oneOf(moderationStates),
      moderationActionId: nullableText(),
      createdAt: nullableTimestamp(),
      decidedAt: nullableTimestamp(),
      links: links(),
    },
  ),
);
