import type { EntityManager } from '@mikro-orm/postgresql';
import { Post } from '../../entities/post.ts';
import { notFound } from '../../errors.ts';

export async function postById(em: EntityManager, id: string): Promise<Post> {
  const post = await em.findOne(Post, { id });
  if (!post) throw notFound(`post ${id}`);
  return post;
}

/** Where a post sits, as its read scopes name it. */
type PostPlace = Pick<Post, 'projectSlug' | 'rootPostId'>;

/**
 * ETag scopes of a new post: the global one (unfiltered listings, the
 * feed), the project's own and its thread's. A new post only adds to its
 * project's listings at their end (its id exceeds the project's latest, postRules.ts).
 */
export function newPostScopes(post: PostPlace): string[] {
  return ['posts', `posts:${post.projectSlug}`, `thread:${post.rootPostId}`];
}

/**
 * ETag scopes of a change to a post already written (tallies, moderation
 * state): those of a new post, and `post-edits:<project>`, the only scope a
 * project listing's settled page depends on (src/routes/forum/posts/posts.ts).
 */
export function postScopes(post: PostPlace): string[] {
  return [...newPostScopes(post), `post-edits:${post.projectSlug}`];
}
