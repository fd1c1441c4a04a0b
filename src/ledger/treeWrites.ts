import { statement, type Statement } from '../db/statements.ts';
import type { Hash } from './merkle.ts';
import { entriesAfterAppend, TILE_HEIGHT, TILE_WIDTH } from './tiles.ts';

/**
 * What a publication adds to its projects' stored trees (tiles.ts), in the
 * trips it already makes: the claim's read also brings the right-edge
 * entries its new leaves complete (usually none: one leaf in 256 completes
 * a tile), and its writes insert the entries above level 0 that completed.
 * The leaves themselves are the ledger rows' leaf_hash.
 */

/** A stored entry as the claim's JSON read returns it (bytea as \x-hex). */
interface EdgeRow {
  project_slug: string;
  level: number;
  idx: number;
  hash: string;
}

/** Levels a 64-bit tree can have entries at (256^8 = 2^64). */
const LEVELS = 8;

/** Whether level row `e`'s new leaves complete its right-edge tile (one that was partly filled). */
const completes = `(e.before % ${TILE_WIDTH}) > 0 and (e.before % ${TILE_WIDTH}) + (e.after - e.before) >= ${TILE_WIDTH}`;
/** The first index of level row `e`'s right-edge tile. */
const lo = `e.before - (e.before % ${TILE_WIDTH})`;

/**
 * The CTEs `sizes` (each project a publication appends to: its size before it
 * and the leaves it adds) and `edges` (the stored edge entries those leaves
 * will complete: at each level, the stored part of the right-edge tile when the
 * new leaves fill it), over a CTE named `leaves` that the caller defines: one
 * row (project_slug) per leaf the publication appends.
 */
export const sizesAndEdges = `sizes as (
       select n.project_slug, count(*) as added,
              (select coalesce(max(l.leaf_index) + 1, 0) from ledger_event l where l.project_slug = n.project_slug) as size
         from leaves n group by n.project_slug),
     levels as (
       select s.project_slug, lv.level, s.size >> (${TILE_HEIGHT} * lv.level) as before, (s.size + s.added) >> (${TILE_HEIGHT} * lv.level) as after
         from sizes s cross join generate_series(0, ${LEVELS - 1}) lv(level)),
     edges as (
       select e.project_slug, 0 as level, l.leaf_index as idx, l.leaf_hash as hash
         from levels e join ledger_event l on l.project_slug = e.project_slug and l.leaf_index >= ${lo} and l.leaf_index < e.before
        where e.level = 0 and ${completes}
       union all
       select e.project_slug, t.level, t.idx, t.hash
         from levels e join ledger_tree_hash t on t.project_slug = e.project_slug and t.level = e.level and t.idx >= ${lo} and t.idx < e.before
        where e.level > 0 and ${completes})`;

/** A published leaf of a project: its index and hash (the ledger rows of one publication, in order). */
export interface PublishedLeaf {
  projectSlug: string;
  leafIndex: number;
  leafHash: Hash;
}

/** The insert of every entry above level 0 that `leaves` complete, or none when they complete no tile. */
export function treeWrites(leaves: readonly PublishedLeaf[], edges: readonly unknown[]): Statement[] {
  const byProject = new Map<string, PublishedLeaf[]>();
  for (const leaf of leaves) byProject.set(leaf.projectSlug, [...(byProject.get(leaf.projectSlug) ?? []), leaf]);
  const stored = (edges as EdgeRow[]).map((row) => ({ ...row, bytes: Buffer.from(row.hash.slice(2), 'hex') }));
  const rows: { slug: string; level: number; index: number; hash: Hash }[] = [];
  for (const [slug, added] of byProject) {
    const partial = (level: number) =>
      stored
        .filter((row) => row.project_slug === slug && row.level === level)
        .sort((a, b) => a.idx - b.idx)
        .map((row) => row.bytes);
    const size = (added[0] as PublishedLeaf).leafIndex;
    for (const entry of entriesAfterAppend(
      size,
      added.map((leaf) => leaf.leafHash),
      partial,
    ))
      rows.push({ slug, ...entry });
  }
  if (rows.length === 0) return [];
  return [
    statement(
      `insert into ledger_tree_hash (project_slug, level, idx, hash)
       select slug, level, idx, decode(hash, 'hex') from unnest(?::text[], ?::smallint[], ?::bigint[], ?::text[]) r(slug, level, idx, hash)`,
      [rows.map((r) => r.slug), rows.map((r) => r.level), rows.map((r) => r.index), rows.map((r) => Buffer.from(r.hash).toString('hex'))],
    ),
  ];
}
