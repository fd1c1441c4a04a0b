import type { EntityManager } from '@mikro-orm/postgresql';
import { run } from '../db/postgres.ts';
import { statement } from '../db/statements.ts';
import { auditPath, consistencyPath, treeRoot, type Hash, type SubtreeRoots } from './merkle.ts';
import { entriesNeeded, entryLookup, tiledSubtrees, TILE_WIDTH, type Entry, type EntryRange, type TileAddress } from './tiles.ts';

/**
 * A project's Merkle tree as stored: level-0 entries are the leaf hashes of
 * its ledger events (leaf_index), entries above are ledger_tree_hash rows
 * the publisher wrote when their subtrees completed (treeWrites.ts). Every
 * function here reads O(log n) entries and hashes at most a few hundred, at
 * any size of the tree.
 */

/** Number of leaves (published events) in the project's tree; an index lookup, since leaf indexes are dense. */
export async function projectTreeSize(em: EntityManager, projectSlug: string): Promise<number> {
  const [row] = await run<{ size: string }>(
    em,
    statement('select coalesce(max(leaf_index) + 1, 0)::text as size from ledger_event where project_slug = ?', [projectSlug]),
  );
  return Number(row?.size ?? '0');
}

/** Overlapping or touching ranges of one level merged, so each entry is read once. */
function merged(ranges: readonly EntryRange[]): EntryRange[] {
  const sorted = [...ranges].sort((a, b) => a.level - b.level || a.from - b.from);
  const out: EntryRange[] = [];
  for (const range of sorted) {
    const last = out.at(-1);
    if (last && last.level === range.level && range.from <= last.to) last.to = Math.max(last.to, range.to);
    else out.push({ ...range });
  }
  return out;
}

/** The stored entries of `ranges`, in one statement: level 0 from the ledger, the rest from ledger_tree_hash. */
async function readEntries(em: EntityManager, projectSlug: string, ranges: readonly EntryRange[]): Promise<Entry[]> {
  const all = merged(ranges);
  const leaves = all.filter((r) => r.level === 0);
  const upper = all.filter((r) => r.level > 0);
  const rows = await run<{ level: number; idx: string; hash: Buffer }>(
    em,
    statement(
      `select 0 as level, e.leaf_index::text as idx, e.leaf_hash as hash
         from unnest(?::bigint[], ?::bigint[]) r(lo, hi)
         join ledger_event e on e.project_slug = ? and e.leaf_index >= r.lo and e.leaf_index < r.hi
       union all
       select t.level, t.idx::text, t.hash
         from unnest(?::int[], ?::bigint[], ?::bigint[]) r(level, lo, hi)
         join ledger_tree_hash t on t.project_slug = ? and t.level = r.level and t.idx >= r.lo and t.idx < r.hi`,
      [
        leaves.map((r) => r.from),
        leaves.map((r) => r.to),
        projectSlug,
        upper.map((r) => r.level),
        upper.map((r) => r.from),
        upper.map((r) => r.to),
        projectSlug,
      ],
    ),
  );
  return rows.map((row) => ({ level: row.level, index: Number(row.idx), hash: row.hash }));
}

/** Runs `compute` over the project's subtree roots, reading only the entries it asks for. */
async function fromTiles<T>(em: EntityManager, projectSlug: string, compute: (subtrees: SubtreeRoots) => T): Promise<T> {
  const entries = await readEntries(em, projectSlug, entriesNeeded(compute));
  return compute(tiledSubtrees(entryLookup(entries)));
}

/** The tree of the project's first `size` events (size >= 1): its root and the ids of its first and last events. */
export interface TreeHead {
  projectSlug: string;
  size: number;
  root: Hash;
  firstEventId: string;
  lastEventId: string;
}

export async function treeHead(em: EntityManager, projectSlug: string, size: number): Promise<TreeHead> {
  const root = await fromTiles(em, projectSlug, (subtrees) => treeRoot(subtrees, size));
  const ends = await run<{ leaf_index: string; event_id: string }>(
    em,
    statement('select leaf_index::text, event_id::text from ledger_event where project_slug = ? and leaf_index = any(?::bigint[])', [
      projectSlug,
      [0, size - 1],
    ]),
  );
  const idAt = (index: number) => ends.find((row) => Number(row.leaf_index) === index)?.event_id ?? '0';
  return { projectSlug, size, root, firstEventId: idAt(0), lastEventId: idAt(size - 1) };
}

/** What a read of a project's log starts from: whether the project exists, its tree size, and the leaf of one event (if asked). */
export interface LogState {
  known: boolean;
  size: number;
  leaf: { index: number; hash: Hash } | null;
}

/** LogState in one statement: a proof or tile read makes one round trip before it reads entries. */
export async function logState(em: EntityManager, projectSlug: string, eventId: string | null = null): Promise<LogState> {
  const [row] = await run<{ known: boolean; size: string; leaf_index: string | null; leaf_hash: Buffer | null }>(
    em,
    statement(
      `select exists (select 1 from project where slug = ?) as known,
              (select coalesce(max(leaf_index) + 1, 0) from ledger_event where project_slug = ?)::text as size,
              l.leaf_index::text as leaf_index, l.leaf_hash
         from (select 1) one left join ledger_event l on l.event_id = ?::bigint and l.project_slug = ?`,
      [projectSlug, projectSlug, eventId, projectSlug],
    ),
  );
  const leaf = row?.leaf_index != null && row.leaf_hash ? { index: Number(row.leaf_index), hash: row.leaf_hash } : null;
  return { known: row?.known ?? false, size: Number(row?.size ?? '0'), leaf };
}

/** RFC 6962 PATH(index, D[size]) and the root it leads to. */
export function inclusionAt(em: EntityManager, projectSlug: string, index: number, size: number): Promise<{ root: Hash; path: Hash[] }> {
  return fromTiles(em, projectSlug, (subtrees) => ({ root: treeRoot(subtrees, size), path: auditPath(subtrees, index, size) }));
}

/** RFC 6962 PROOF(first, D[second]) and both roots. */
export function consistencyAt(
  em: EntityManager,
  projectSlug: string,
  first: number,
  second: number,
): Promise<{ firstRoot: Hash; secondRoot: Hash; path: Hash[] }> {
  return fromTiles(em, projectSlug, (subtrees) => ({
    firstRoot: treeRoot(subtrees, first),
    secondRoot: treeRoot(subtrees, second),
    path: consistencyPath(subtrees, first, second),
  }));
}

/** A tile's bytes: its entries' hashes, 32 bytes each (the caller checks the tree holds them all). */
export async function tileBytes(em: EntityManager, projectSlug: string, { level, index, width }: TileAddress): Promise<Buffer> {
  const from = index * TILE_WIDTH;
  const entries = await readEntries(em, projectSlug, [{ level, from, to: from + width }]);
  entries.sort((a, b) => a.index - b.index);
  return Buffer.concat(entries.map((e) => e.hash));
}
