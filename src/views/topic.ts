import type { Topic } from '../entities/topic.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import { reviewModes } from '../entities/topic.ts';
import { links, named, nullableTimestamp, oneOf, record, text } from './schema.ts';

export function presentTopic(topic: Topic, view: View) {
  return withFull(
    view,
    { id: topic.id, slug: topic.slug, title: topic.title, projectSlug: topic.projectSlug, reviewMode: topic.reviewMode },
    () => ({
      createdAt: iso(topic.createdAt),
      updatedAt: iso(topic.updatedAt),
      links: {
        self: `${forumBase}/topics?projectSlug=${topic.projectSlug}`,
        posts: `${forumBase}/posts?projectSlug=${topic.projectSlug}&topicSlug=${topic.slug}`,
      },
    }),
  );
}

export const topicRecord = named(
  'Topic',
  record(
    { id: text(), slug: text(), title: text(), projectSlug: text(), reviewMode: oneOf(reviewModes) },
    { createdAt: nullableTimestamp(), updatedAt: nullableTimestamp(), links: links() },
  ),
);
