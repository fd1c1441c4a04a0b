import { nodeHash, type Hash, type SubtreeRoots } from './merkle.ts';

/**
 * A project's Merkle tree as C2SP tlog-tiles stores it: a tile of level L
 * holds up to 256 consecutive hashes of complete subtrees of 256^L leaves
 * (level 0: the leaf hashes), and every other node is hashed from one tile's
 * entries. The publisher stores each entry once, when its subtree completes,
 * so a proof or a root reads O(log n) stored hashes, never the whole tree.
 * Pure: the SQL that stores and reads entries is tree.ts and treeWrites.ts.
 */
export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 2 ** TILE_HEIGHT;
/** A 64-bit tree has no subtree above level 7 (256^8 = 2^64); levels up to 63 are valid paths that hold nothing. */
const MAX_LEVEL = 63;

/** Stored hash number `index` of tile level `level`: the root of leaves [index * 256^level, (index + 1) * 256^level). */
export interface Entry {
  level: number;
  index: number;
  hash: Hash;
}

/** Entries [from, to) of one level, as a read asks for them. */
export interface EntryRange {
  level: number;
  from: number;
  to: number;
}

const leavesPerEntry = (level: number): number => TILE_WIDTH ** level;

/** The root of a perfect tree over `hashes` (a power of two of them), bottom-up. */
function perfectRoot(hashes: readonly Hash[]): Hash {
  let layer = hashes;
  while (layer.length > 1) {
    const next: Hash[] = [];
    for (let i = 0; i < layer.length; i += 2) next.push(nodeHash(layer[i] as Hash, layer[i + 1] as Hash));
    layer = next;
  }
  return layer[0] as Hash;
}

/**
 * The partial tiles a publication must read: at each level, the entries of
 * the right-edge tile that `added` new leaves complete (a tile that stays
 * partial is not needed; it completes later, and is read then).
 */
export function completedPartials(size: number, added: number): EntryRange[] {
  const ranges: EntryRange[] = [];
  for (let level = 0; leavesPerEntry(level) <= size + added; level++) {
    const before = Math.floor(size / leavesPerEntry(level));
    const after = Math.floor((size + added) / leavesPerEntry(level));
    const filled = before % TILE_WIDTH;
    if (filled > 0 && filled + (after - before) >= TILE_WIDTH) ranges.push({ level, from: before - filled, to: before });
  }
  return ranges;
}

/**
 * The entries above level 0 that appending `added` leaf hashes to a tree of
 * `size` leaves completes; `partial(level)` gives the stored entries of each
 * range completedPartials named, in order.
 */
export function entriesAfterAppend(size: number, added: readonly Hash[], partial: (level: number) => readonly Hash[]): Entry[] {
  const stored: Entry[] = [];
  let existing = size;
  let fresh = added;
  for (let level = 0; fresh.length > 0; level++) {
    const filled = existing % TILE_WIDTH;
    const completes = filled + fresh.length >= TILE_WIDTH;
    const known = filled > 0 && completes ? partial(level) : [];
    if (known.length !== (filled > 0 && completes ? filled : 0)) throw new Error(`tile level ${level}: expected ${filled} stored entries`);
    const all = [...known, ...fresh];
    const parents: Hash[] = [];
    for (let offset = 0; offset + TILE_WIDTH <= all.length; offset += TILE_WIDTH)
      parents.push(perfectRoot(all.slice(offset, offset + TILE_WIDTH)));
    const parentStart = Math.floor(existing / TILE_WIDTH);
    for (const [i, hash] of parents.entries()) stored.push({ level: level + 1, index: parentStart + i, hash });
    existing = parentStart;
    fresh = parents;
  }
  return stored;
}

/** [start, end) as aligned power-of-two subtrees, largest first: MTH of the range folds them from the right. */
function completeSubtrees(start: number, end: number): { height: number; index: number }[] {
  const parts: { height: number; index: number }[] = [];
  let at = start;
  while (at < end) {
    let height = 0;
    while (2 ** (height + 1) <= end - at && at % 2 ** (height + 1) === 0) height++;
    parts.push({ height, index: at / 2 ** height });
    at += 2 ** height;
  }
  return parts;
}

/** Where a complete subtree's hash comes from: 2^(height mod 8) consecutive entries of tile level floor(height / 8). */
function entriesOf({ height, index }: { height: number; index: number }): EntryRange {
  const level = Math.floor(height / TILE_HEIGHT);
  const count = 2 ** (height % TILE_HEIGHT);
  return { level, from: index * count, to: (index + 1) * count };
}

/**
 * The entries a computation over subtree roots reads: it runs once against
 * placeholders to learn which subtrees it asks for. Ranges may overlap; the
 * reader merges them.
 */
export function entriesNeeded(compute: (subtrees: SubtreeRoots) => unknown): EntryRange[] {
  const ranges: EntryRange[] = [];
  const placeholder = new Uint8Array(32);
  compute((start, end) => {
    for (const part of completeSubtrees(start, end)) ranges.push(entriesOf(part));
    return placeholder;
  });
  return ranges;
}

/** Subtree roots hashed from stored entries (`entry` throws for one it was not given). */
export function tiledSubtrees(entry: (level: number, index: number) => Hash): SubtreeRoots {
  return (start, end) => {
    const parts = completeSubtrees(start, end).map((part) => {
      const { level, from, to } = entriesOf(part);
      return perfectRoot(Array.from({ length: to - from }, (_, i) => entry(level, from + i)));
    });
    return parts.reduceRight((right, left) => nodeHash(left, right));
  };
}

/** Entries sorted into a lookup by level and index. */
export function entryLookup(entries: readonly Entry[]): (level: number, index: number) => Hash {
  const byKey = new Map(entries.map((e) => [`${e.level}/${e.index}`, e.hash]));
  return (level, index) => {
    const hash = byKey.get(`${level}/${index}`);
    if (!hash) throw new Error(`tile entry ${level}/${index} is not stored`);
    return hash;
  };
}

/** Entries of tile level `level` the tree of `size` leaves holds (complete subtrees of 256^level leaves). */
export function entriesAtLevel(size: number, level: number): number {
  return Math.floor(size / leavesPerEntry(level));
}

/** A tile's address: level, index, and its width (256 for a full tile). */
export interface TileAddress {
  level: number;
  index: number;
  width: number;
}

/** C2SP's encoding of a tile index: three-digit groups, all but the last prefixed with x (1234067: x001/x234/067). */
export function encodeTileIndex(index: number): string {
  const digits = String(index).padStart(Math.ceil(String(index).length / 3) * 3, '0');
  const groups = digits.match(/\d{3}/g) as string[];
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

/** `<L>/<N>[.p/<W>]`, as tlog-tiles names it under `tile/`. */
export function tilePath({ level, index, width }: TileAddress): string {
  return `${level}/${encodeTileIndex(index)}${width < TILE_WIDTH ? `.p/${width}` : ''}`;
}

/** The address a `tile/` path names, or null when it is not the canonical form of one (so each tile has one URL). */
export function parseTilePath(path: string): TileAddress | null {
  const match = /^(0|[1-9]\d?)\/((?:x\d{3}\/)*)(\d{3})(?:\.p\/([1-9]\d{0,2}))?$/.exec(path);
  if (!match) return null;
  const [, levelText, prefixes, last, widthText] = match as unknown as [string, string, string, string, string | undefined];
  const level = Number(levelText);
  const groups = [
    ...prefixes
      .split('/')
      .filter(Boolean)
      .map((g) => g.slice(1)),
    last,
  ];
  if (groups.length > 1 && groups[0] === '000') return null;
  const index = Number(groups.join(''));
  const width = widthText === undefined ? TILE_WIDTH : Number(widthText);
  if (widthText !== undefined && width === TILE_WIDTH) return null;
  if (level > MAX_LEVEL || !Number.isSafeInteger(index) || width > TILE_WIDTH) return null;
  return { level, index, width };
}
