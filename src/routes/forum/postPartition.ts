import type { EntityManager } from '@mikro-orm/postgresql';
import { Post } from '../../entities/post.ts';
import { projectPartition } from './partitions.ts';

/**
 * Votes and flags run in their post's project partition, serialized with
 * the post's other changes; the post id is resolved to the project here.
 * An unknown post still needs a partition: the command then answers 404.
 */
export async function postPartition(params: { postId: string }, _actor: unknown, em: EntityManager): Promise<string> {
  const rows = await em.execute<{ project_slug: string }[]>('select project_slug from post where id = ?', [params.postId]);
  return rows[0] ? projectPartition(rows[0].project_slug) : `post:${params.postId}`;
}
