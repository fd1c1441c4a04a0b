import { describe, expect, it } from 'vitest';
import {
  consistencyProof,
  inclusionProof,
  leafHash,
  rootHash,
  treeRoot,
  auditPath,
  consistencyPath,
  type Hash,
} from '../../src/ledger/merkle.ts';
import {
  completedPartials,
  encodeTileIndex,
  entriesAfterAppend,
  entriesNeeded,
  entryLookup,
  parseTilePath,
  tiledSubtrees,
  tilePath,
  type Entry,
} from '../../src/ledger/tiles.ts';

/** A deterministic generator, so a failure names a case that can be replayed. */
function random(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % below;
  };
}

const hex = (hashes: Hash[]): string[] => hashes.map((h) => Buffer.from(h).toString('hex'));

/** A tree grown in random batches exactly as the publisher grows one: each batch reads only the partials it completes. */
function grow(total: number, next: (below: number) => number): { leaves: Hash[]; stored: Entry[] } {
  const leaves: Hash[] = [];
  const stored: Entry[] = [];
  while (leaves.length < total) {
    const added = Array.from({ length: Math.min(1 + next(700), total - leaves.length) }, (_, i) => leafHash(`leaf ${leaves.length + i}`));
    const wanted = completedPartials(leaves.length, added.length);
    const partial = (level: number) => {
      const range = wanted.find((r) => r.level === level);
      if (!range) throw new Error(`level ${level} was not asked for`);
      const entries = level === 0 ? leaves.map((hash, index) => ({ level, index, hash })) : stored;
      return entries.filter((e) => e.level === level && e.index >= range.from && e.index < range.to).map((e) => e.hash);
    };
    stored.push(...entriesAfterAppend(leaves.length, added, partial));
    leaves.push(...added);
  }
  return { leaves, stored };
}

function subtreesOf(leaves: Hash[], stored: Entry[]) {
  const all = [...leaves.map((hash, index) => ({ level: 0, index, hash })), ...stored];
  return tiledSubtrees(entryLookup(all));
}

describe('tiles of a Merkle tree', () => {
  const next = random(20261127);
  const { leaves, stored } = grow(5000, next);
  const subtrees = subtreesOf(leaves, stored);

  it('stores one entry per complete subtree of 256 and 65,536 leaves, each the root of its leaves', () => {
    expect(stored.filter((e) => e.level === 1).map((e) => e.index)).toEqual(Array.from({ length: 19 }, (_, i) => i));
    expect(stored.filter((e) => e.level > 1)).toEqual([]);
    for (const entry of stored) expect(entry.hash).toEqual(rootHash(leaves.slice(entry.index * 256, (entry.index + 1) * 256)));
  });

  it('gives the whole-tree root for every tree size up to 5,000', () => {
    for (let size = 1; size <= 5000; size += 1 + next(250)) expect(treeRoot(subtrees, size)).toEqual(rootHash(leaves.slice(0, size)));
  });

  it('gives the whole-tree inclusion proof of random leaves in random tree sizes', () => {
    for (let round = 0; round < 80; round++) {
      const size = 1 + next(5000);
      const index = next(size);
      expect(hex(auditPath(subtrees, index, size))).toEqual(hex(inclusionProof(leaves, index, size)));
    }
  });

  it('gives the whole-tree consistency proof of random (first, second) pairs', () => {
    for (let round = 0; round < 80; round++) {
      const second = 1 + next(5000);
      const first = 1 + next(second);
      expect(hex(consistencyPath(subtrees, first, second))).toEqual(hex(consistencyProof(leaves, first, second)));
    }
  });

  it('reads at most a few hundred entries for a proof in a tree of a million leaves', () => {
    const size = 1_000_000;
    const wanted = entriesNeeded((s) => [auditPath(s, 777_777, size), consistencyPath(s, 654_321, size), treeRoot(s, size)]);
    const read = wanted.reduce((n, r) => n + (r.to - r.from), 0);
    expect(read).toBeLessThan(1500);
  });
});

describe('tile paths', () => {
  it('encode an index as three-digit groups, all but the last prefixed with x', () => {
    expect(encodeTileIndex(0)).toBe('000');
    expect(encodeTileIndex(999)).toBe('999');
    expect(encodeTileIndex(1000)).toBe('x001/000');
    expect(encodeTileIndex(1234067)).toBe('x001/x234/067');
  });

  it('name a partial tile by its width after .p', () => {
    expect(tilePath({ level: 1, index: 1234067, width: 7 })).toBe('1/x001/x234/067.p/7');
    expect(tilePath({ level: 0, index: 3, width: 256 })).toBe('0/003');
  });

  it('parse back to the address they were made from', () => {
    for (const address of [
      { level: 0, index: 0, width: 256 },
      { level: 2, index: 1234067, width: 255 },
      { level: 63, index: 1000, width: 1 },
    ])
      expect(parseTilePath(tilePath(address))).toEqual(address);
  });

  it('refuse every form that is not the one canonical path of a tile', () => {
    for (const path of [
      '0/1',
      '0/0001',
      '0/x000/001',
      '01/000',
      '64/000',
      '0/000.p/0',
      '0/000.p/256',
      '0/000.p/007',
      '0/000/',
      'a/000',
      '0/x001',
    ]) {
      expect(parseTilePath(path), path).toBeNull();
    }
  });
});
