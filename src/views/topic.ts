import type { Topic } from '../entities/topic.ts';
import { forumBase, iso, withFull, type View } from './view.ts';

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
