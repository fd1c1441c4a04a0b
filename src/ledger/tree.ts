import type { EntityManager } from '@mikro-orm/postgresql';
import type { Hash } from './merkle.ts';

/** The first `size` leaves of a project's Merkle tree, as published. */
export interface ProjectTree {
  projectSlug: string;
  size: number;
  leaves: Hash[];
  /** Ledger event id of each leaf, by leaf index. */
  eventIds: string[];
}

/** Number of leaves (published events) in the project's tree; an index lookup, since leaf indexes are dense. */
export async function projectTreeSize(em: EntityManager, projectSlug: string): Promise<number> {
  const [row] = await em.execute<{ size: string }[]>(
    'select coalesce(max(leaf_index) + 1, 0)::text as size from ledger_event where project_slug = ?',
    [projectSlug],
  );
  return Number(row?.size ?? '0');
}

/**
 * Loads the tree of the project's first `size` events (all of them by
 * default). Leaf indexes are dense by construction (the publisher assigns
 * them under its lock, and (project, leafIndex) is unique), so the rows are
 * exactly the leaves 0..size-1.
 */
export async function loadProjectTree(em: EntityManager, projectSlug: string, size?: number): Promise<ProjectTree> {
  const rows = await em.execute<{ event_id: string; leaf_hash: Buffer }[]>(
    `select event_id::text as event_id, leaf_hash from ledger_event
      where project_slug = ? and leaf_index < ? order by leaf_index`,
    [projectSlug, size ?? Number.MAX_SAFE_INTEGER],
  );
  return { projectSlug, size: rows.length, leaves: rows.map((r) => r.leaf_hash), eventIds: rows.map((r) => r.event_id) };
}
