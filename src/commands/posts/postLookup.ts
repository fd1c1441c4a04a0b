import type { EntityManager } from '@mikro-orm/postgresql';
import { Post } from '../../entities/post.ts';
import { notFound } from '../../errors.ts';

export async function postById(em: EntityManager, id: string): Promise<Post> {
  const post = await em.findOne(Post, { id });
  if (!post) throw notFound(`post ${id}`);
  return post;
}

/**
 * ETag scopes of a new post: the global one (unfiltered listings, threads,
 * the feed) and the project's own. A new post only adds to its project's
 * listings at their end (its id exceeds the project's latest, postRules.ts).
 */
export function newPostScopes(projectSlug: string): string[] {
  return ['posts', `posts:${projectSlug}`];
}

/**
 * ETag scopes of a change to a post already written (tallies, moderation
 * state): those of a new post, and `post-edits:<project>`, the only scope a
 * project listing's settled page depends on (src/routes/forum/posts/posts.ts).
 */
export function postScopes(projectSlug: string): string[] {
  return [...newPostScopes(projectSlug), `post-edits:${projectSlug}`];
}
