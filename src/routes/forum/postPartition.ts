import type { EntityManager } from '@mikro-orm/postgresql';
import { postProject } from '../../db/owners.ts';
import { projectPartition } from './partitions.ts';

/** A post never changes project, so its partition is remembered (per API instance, bounded). */
const MAX_REMEMBERED = 100_000;
const remembered = new Map<string, string>();

function remember(postId: string, partition: string): string {
  if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
  remembered.set(postId, partition);
  return partition;
}

/**
 * Votes and flags run in their post's project partition, serialized with
 * the post's other changes; the post id is resolved to the project here, from
 * Postgres the first time and from memory after. An unknown post still needs
 * a partition (not remembered: it may exist later): the command then answers 404.
 */
export async function postPartition(params: { postId: string }, _actor: unknown, db: () => EntityManager): Promise<string> {
  const known = remembered.get(params.postId);
  if (known) return known;
  const project = await postProject(db(), params.postId);
  return project ? remember(params.postId, projectPartition(project)) : `post:${params.postId}`;
}
