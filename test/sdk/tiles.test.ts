import { describe, expect, it } from 'vitest';
import { LogFollower } from '../../sdk/src/logFollower.ts';
import { rootHash, verifyConsistency, verifyInclusion, type Hash } from '../../sdk/src/merkle.ts';
import { encodeTileIndex, TileLog, tilePath, tilesOfTree } from '../../sdk/src/tiles.ts';
import * as service from '../../src/ledger/merkle.ts';
import * as serviceTiles from '../../src/ledger/tiles.ts';

/** A deterministic generator, so a failure names a case that can be replayed. */
function random(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % below;
  };
}

const hex = (hashes: readonly Hash[]): string[] => hashes.map((h) => Buffer.from(h).toString('hex'));
const base64 = (hash: Hash): string => Buffer.from(hash).toString('base64');

/**
 * A log's tiles as the service serves them, from the whole-tree functions:
 * entry k of level L is the root of leaves [k * 256^L, (k + 1) * 256^L),
 * any width the tree of `size()` leaves holds, a refusal beyond it.
 */
function servedTiles(leaves: () => readonly Hash[], size: () => number): (path: string) => Promise<Uint8Array> {
  return async (path) => {
    const address = serviceTiles.parseTilePath(path);
    if (!address) throw new Error(`404 ${path}`);
    const span = 256 ** address.level;
    const from = address.index * 256;
    if (from + address.width > Math.floor(size() / span)) throw new Error(`404 ${path}: the tree does not hold it`);
    const entries = Array.from({ length: address.width }, (_, i) =>
      service.rootHash(leaves().slice((from + i) * span, (from + i + 1) * span)),
    );
    return new Uint8Array(Buffer.concat(entries));
  };
}

const next = random(20261128);
const leaves = Array.from({ length: 5000 }, (_, i) => service.leafHash(`leaf ${i}`));
const tiles = servedTiles(
  () => leaves,
  () => leaves.length,
);

describe('tile paths in the SDK', () => {
  it('encode indexes and addresses as the service does', () => {
    for (const index of [0, 7, 999, 1000, 1234067, 999_999_999, ...Array.from({ length: 50 }, () => next(2 ** 31))]) {
      expect(encodeTileIndex(index)).toBe(serviceTiles.encodeTileIndex(index));
      const address = { level: next(8), index, width: 1 + next(256) };
      expect(tilePath(address)).toBe(serviceTiles.tilePath(address));
    }
  });

  it('list every tile of a tree: the full ones and each level’s partial', () => {
    expect(tilesOfTree(0)).toEqual([]);
    expect(tilesOfTree(601).map(tilePath)).toEqual(['0/000', '0/001', '0/002.p/89', '1/000.p/2']);
    expect(
      tilesOfTree(65_536)
        .filter((t) => t.level > 0)
        .map(tilePath),
    ).toEqual(['1/000', '2/000.p/1']);
  });
});

describe('roots and proofs the SDK computes from tiles (WebCrypto)', () => {
  // One TileLog across all sizes, taken in random order: wider tiles held from a larger tree serve smaller ones as prefixes.
  const shared = new TileLog(tiles);

  it('give the whole-tree root for random tree sizes up to 5,000', async () => {
    const sizes = [1, 255, 256, 257, 511, 512, 513, 4999, 5000, ...Array.from({ length: 40 }, () => 1 + next(5000))];
    for (const [i, size] of sizes.entries()) {
      const fromTiles = base64(await shared.root(size));
      expect(fromTiles, `size ${size}`).toBe(base64(service.rootHash(leaves.slice(0, size))));
      expect(base64(await new TileLog(tiles).root(size)), `size ${size}, fresh`).toBe(fromTiles);
      // The SDK's own whole-tree root hashes every leaf, one WebCrypto call a node: every eighth size is enough.
      if (i % 8 === 0) expect(fromTiles, `size ${size}`).toBe(base64(await rootHash(leaves.slice(0, size))));
    }
  });

  it('give the whole-tree inclusion proof of random leaves in random tree sizes, and it verifies', async () => {
    for (let round = 0; round < 60; round++) {
      const size = 1 + next(5000);
      const index = next(size);
      const proof = await shared.inclusionProof(index, size);
      expect(hex(proof), `${index}@${size}`).toEqual(hex(service.inclusionProof(leaves, index, size)));
      expect(await verifyInclusion(leaves[index]!, index, size, proof, await shared.root(size))).toBe(true);
    }
  });

  it('give the whole-tree consistency proof of random (first, second) pairs, and it verifies', async () => {
    for (let round = 0; round < 60; round++) {
      const second = 1 + next(5000);
      const first = 1 + next(second);
      const proof = await shared.consistencyProof(first, second);
      expect(hex(proof), `${first}->${second}`).toEqual(hex(service.consistencyProof(leaves, first, second)));
      const [a, b] = [await shared.root(first), await shared.root(second)];
      expect(await verifyConsistency(first, second, a, b, proof), `${first}->${second}`).toBe(true);
    }
  });

  it('fetch each full tile once and a partial one again only for a larger tree', async () => {
    const log = new TileLog(tiles);
    await log.root(601);
    expect(log.fetched.toSorted()).toEqual(['0/002.p/89', '1/000.p/2']);
    await log.root(600);
    await log.consistencyProof(512, 601);
    expect(log.fetched).toHaveLength(2);
    await log.root(605);
    expect(log.fetched.slice(2)).toEqual(['0/002.p/93']);
    await log.consistencyProof(601, 1000);
    await log.inclusionProof(700, 1000);
    await log.root(1024);
    const full = log.fetched.filter((path) => !path.includes('.p/'));
    expect(full).toEqual([...new Set(full)]);
    expect(full).toContain('0/002');
  });

  it('refuses a tile it cannot have, and sizes outside the tree', async () => {
    const short = new TileLog(
      servedTiles(
        () => leaves,
        () => 300,
      ),
    );
    await expect(short.root(600)).rejects.toThrow(/^404 1\/000\.p\/2: the tree does not hold it/);
    expect(() => short.inclusionProof(5, 5)).toThrow(RangeError);
    expect(() => short.consistencyProof(6, 5)).toThrow(RangeError);
  });
});

/** A service's log endpoints over a growing (or rewritten) list of leaves; the note's signature line is a placeholder. */
function fakeService(projectSlug: string) {
  const state: { leaves: Hash[]; size: number; claimedRoot?: Hash } = { leaves: leaves.slice(0, 601), size: 601 };
  const base = `http://log.test/api/forum/logs/${projectSlug}`;
  const tile = servedTiles(
    () => state.leaves,
    () => state.size,
  );
  const get = async (url: string): Promise<Response> => {
    if (url === `${base}/checkpoint`) {
      const root = base64(state.claimedRoot ?? service.rootHash(state.leaves.slice(0, state.size)));
      const signature = Buffer.alloc(68, 7).toString('base64');
      return new Response(`agora/${projectSlug}\n${state.size}\n${root}\n\n— agora/${projectSlug}/SHA256:witness ${signature}\n`);
    }
    try {
      return new Response(Buffer.from(await tile(url.slice(`${base}/tile/`.length))));
    } catch {
      return new Response('{}', { status: 404 });
    }
  };
  return { state, follower: new LogFollower('http://log.test/', projectSlug, get) };
}

describe('a LogFollower', () => {
  it('proves each new checkpoint extends the last, fetching only tiles it lacks', async () => {
    const { state, follower } = fakeService('demo');
    const first = await follower.update();
    expect(first).toMatchObject({ treeSize: 601, previousSize: 0, signers: ['SHA256:witness'] });
    expect(first.fetched.toSorted()).toEqual(['0/002.p/89', '1/000.p/2']);
    expect((await follower.update()).fetched).toEqual([]);
    state.leaves = leaves.slice(0, 906);
    state.size = 902;
    const grown = await follower.update();
    expect(grown).toMatchObject({ treeSize: 902, previousSize: 601 });
    state.size = 906;
    // The level-1 partial still has 3 entries: only the level-0 partial grew.
    expect((await follower.update()).fetched).toEqual(['0/003.p/138']);
    const paths = [first, grown].flatMap((u) => u.fetched);
    expect(paths).toEqual([...new Set(paths)]);
  });

  it('refuses a log that rewrote a leaf it had seen, and keeps the tree it held', async () => {
    const { state, follower } = fakeService('demo');
    await follower.update();
    const rewritten = [...leaves.slice(0, 700)];
    rewritten[600] = service.leafHash('rewritten');
    state.leaves = rewritten;
    state.size = 700;
    await expect(follower.update()).rejects.toThrow('tile 0/002.p/188: its first 89 hashes differ from those of the tile held before');
    expect(follower.treeSize).toBe(601);
  });

  it('refuses a checkpoint that shrank the log, or whose root its tiles do not give', async () => {
    const { state, follower } = fakeService('demo');
    await follower.update();
    state.size = 600;
    await expect(follower.update()).rejects.toThrow('the log shrank from 601 to 600 leaves');
    const other = fakeService('other');
    other.state.claimedRoot = service.leafHash('not the root');
    await expect(other.follower.update()).rejects.toThrow("the root of the tiles of 601 leaves differs from the checkpoint's");
    expect(other.follower.treeSize).toBe(0);
  });
});
