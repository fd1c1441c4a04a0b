import type { EntityManager } from '@mikro-orm/postgresql';
import { Post } from '../../entities/post.ts';
import { notFound } from '../../errors.ts';

export async function postById(em: EntityManager, id: string): Promise<Post> {
  const post = await em.findOne(Post, { id });
  if (!post) throw notFound(`post ${id}`);
  return post;
}

/**
 * ETag scopes of post reads: the global one (unfiltered listings, threads,
 * the feed) and the project's own. Every command that changes what a post
 * read shows (creation, tallies, moderation state) touches both.
 */
export function postScopes(projectSlug: string): string[] {
  return ['posts', `posts:${projectSlug}`];
}
