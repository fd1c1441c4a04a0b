import type { Follow } from '../entities/follow.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import { followTargets } from '../entities/follow.ts';
import { links, named, nullableText, nullableTimestamp, oneOf, record, text } from './schema.ts';

export function presentFollow(follow: Follow, view: View) {
  const topic = follow.targetType === 'topic' ? `&topicSlug=${follow.topicSlug ?? ''}` : '';
  return withFull(
    view,
    { id: follow.id, targetType: follow.targetType, projectSlug: follow.projectSlug, topicSlug: follow.topicSlug ?? null },
    () => ({ createdAt: iso(follow.createdAt), links: { posts: `${forumBase}/posts?projectSlug=${follow.projectSlug}${topic}` } }),
  );
}

export const followRecord = named(
  'Follow',
  record(
    { id: text(), targetType: oneOf(followTargets), projectSlug: text(), topicSlug: nullableText() },
    { createdAt: nullableTimestamp(), links: links() },
  ),
);
