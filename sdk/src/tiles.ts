import { auditPath, consistencyPath, nodeHash, treeRoot, type Hash, type SubtreeRoots } from './merkle.ts';

/**
 * A project's log as C2SP tlog-tiles serves it, from the verifier's side: a
 * tile of level L holds up to 256 consecutive hashes of complete subtrees
 * of 256^L leaves (level 0: the leaf hashes), so any root or proof needs a
 * few tiles, not the whole tree. The service computes proofs from tiles
 * too; a verifier that computes its own from the same tiles needs nothing
 * else from the service but the signed roots it checks them against.
 */
const TILE_HEIGHT = 8;
export const TILE_WIDTH = 2 ** TILE_HEIGHT;
const HASH_SIZE = 32;

/** A tile: level, index, and its width (256 for a full tile, fewer for the growing right edge). */
export interface TileAddress {
  level: number;
  index: number;
  width: number;
}

/** Bytes of the tile at a `tile/` path (`0/x001/234.p/17`), or a rejection when it cannot be had. */
export type TileFetch = (path: string) => Promise<Uint8Array>;

/** Entries of tile level `level` the tree of `size` leaves holds: complete subtrees of 256^level leaves. */
const entriesAtLevel = (size: number, level: number): number => Math.floor(size / TILE_WIDTH ** level);

/** C2SP's encoding of a tile index: three-digit groups, all but the last prefixed with x (1234067: x001/x234/067). */
export function encodeTileIndex(index: number): string {
  const digits = String(index).padStart(Math.ceil(String(index).length / 3) * 3, '0');
  const groups = digits.match(/\d{3}/g) as string[];
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

/** `<L>/<N>[.p/<W>]`, the path under `tile/`. */
export function tilePath({ level, index, width }: TileAddress): string {
  return `${level}/${encodeTileIndex(index)}${width < TILE_WIDTH ? `.p/${width}` : ''}`;
}

/** Every tile of the tree of `size` leaves, level by level: its full tiles and, where a level does not fill one, its partial tile. */
export function tilesOfTree(size: number): TileAddress[] {
  const tiles: TileAddress[] = [];
  for (let level = 0; entriesAtLevel(size, level) > 0; level++) {
    const entries = entriesAtLevel(size, level);
    for (let index = 0; index * TILE_WIDTH < entries; index++)
      tiles.push({ level, index, width: Math.min(TILE_WIDTH, entries - index * TILE_WIDTH) });
  }
  return tiles;
}

export const hashesOf = (bytes: Uint8Array): Hash[] =>
  Array.from({ length: Math.floor(bytes.length / HASH_SIZE) }, (_, i) => bytes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE));

/** The root of a perfect tree over `hashes` (a power of two of them), bottom-up. */
export async function perfectRoot(hashes: readonly Hash[]): Promise<Hash> {
  let layer = hashes;
  while (layer.length > 1) {
    const next: Hash[] = [];
    for (let i = 0; i < layer.length; i += 2) next.push(await nodeHash(layer[i]!, layer[i + 1]!));
    layer = next;
  }
  return layer[0]!;
}

/** [start, end) as aligned power-of-two subtrees, left to right: MTH of a range the proofs ask for folds their roots from the right. */
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

const isSize = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((byte, i) => byte === b[i]);

/**
 * Roots and proofs of a log computed from its tiles, keeping every tile it
 * reads: a full tile never changes, so it is fetched once; a partial one is
 * fetched again only when a larger tree needs entries the held one lacks.
 * Each tree size reads its own tiles (the tile of that size's right edge),
 * and a held tile wider than a smaller tree needs serves it as a prefix.
 * A tile's entries never change once served, so a wider copy whose prefix
 * differs is refused (the log rewrote its history), and every subtree root
 * hashed from entries is kept: WebCrypto hashes one node per call, slowly.
 */
export class TileLog {
  /** The path of every tile fetched, in order: what following a log has cost. */
  readonly fetched: string[] = [];
  private readonly held = new Map<string, Uint8Array>();
  private readonly roots = new Map<string, Hash>();
  private readonly fetchTile: TileFetch;

  constructor(fetchTile: TileFetch) {
    this.fetchTile = fetchTile;
  }

  /** Keeps a tile the caller already has (an export's) as if it had been fetched. */
  hold(address: TileAddress, bytes: Uint8Array): void {
    const key = tilePath({ ...address, width: TILE_WIDTH });
    const had = this.held.get(key) ?? new Uint8Array();
    const common = Math.min(had.length, bytes.length);
    if (!sameBytes(had.subarray(0, common), bytes.subarray(0, common)))
      throw new Error(`tile ${tilePath(address)}: its first ${common / HASH_SIZE} hashes differ from those of the tile held before`);
    if (had.length < bytes.length) this.held.set(key, bytes);
  }

  /** Entry `at` of level `level`, as the tree of `size` leaves holds it. */
  private async entry(level: number, at: number, size: number): Promise<Hash> {
    const index = Math.floor(at / TILE_WIDTH);
    const needed = at + 1 - index * TILE_WIDTH;
    let bytes = this.held.get(tilePath({ level, index, width: TILE_WIDTH }));
    if (!bytes || bytes.length < needed * HASH_SIZE) {
      const address = { level, index, width: Math.min(TILE_WIDTH, entriesAtLevel(size, level) - index * TILE_WIDTH) };
      const path = tilePath(address);
      if (address.width < needed) throw new RangeError(`tile ${path} of the tree of ${size} leaves lacks entry ${at}`);
      bytes = await this.fetchTile(path);
      if (bytes.length !== address.width * HASH_SIZE)
        throw new Error(`tile ${path}: ${bytes.length} bytes where ${address.width} hashes were expected`);
      this.fetched.push(path);
      this.hold(address, bytes);
    }
    return bytes.subarray((needed - 1) * HASH_SIZE, needed * HASH_SIZE);
  }

  /** Root of `count` (a power of two, at most 256) entries from an aligned `from`: a subtree inside one tile. */
  private async entriesRoot(level: number, from: number, count: number, size: number): Promise<Hash> {
    const key = `${level}/${from}/${count}`;
    let root = this.roots.get(key);
    if (!root) {
      const half = count / 2;
      root =
        count === 1
          ? await this.entry(level, from, size)
          : await nodeHash(await this.entriesRoot(level, from, half, size), await this.entriesRoot(level, from + half, half, size));
      this.roots.set(key, root);
    }
    return root;
  }

  /** MTH of any range of the tree of `size` leaves: each complete subtree of it is 2^k entries of one tile. */
  private subtrees(size: number): SubtreeRoots {
    return async (start, end) => {
      const roots: Hash[] = [];
      for (const { height, index } of completeSubtrees(start, end)) {
        const count = 2 ** (height % TILE_HEIGHT);
        roots.push(await this.entriesRoot(Math.floor(height / TILE_HEIGHT), index * count, count, size));
      }
      let root = roots.at(-1)!;
      for (let i = roots.length - 2; i >= 0; i--) root = await nodeHash(roots[i]!, root);
      return root;
    };
  }

  /** MTH of the first `size` leaves. */
  root(size: number): Promise<Hash> {
    if (!isSize(size)) throw new RangeError(`tree size ${size}`);
    return treeRoot(this.subtrees(size), size);
  }

  /** RFC 6962 PATH(index, D[size]): the audit path of leaf `index` in the tree of `size` leaves. */
  inclusionProof(index: number, size: number): Promise<Hash[]> {
    if (!isSize(index) || !isSize(size) || index >= size) throw new RangeError(`leaf ${index} outside the tree of ${size} leaves`);
    return auditPath(this.subtrees(size), index, size);
  }

  /** RFC 6962 PROOF(first, D[second]): that the tree of `first` leaves is a prefix of the tree of `second`. */
  consistencyProof(first: number, second: number): Promise<Hash[]> {
    if (!isSize(first) || !isSize(second) || first > second) throw new RangeError(`tree sizes ${first} -> ${second}`);
    return consistencyPath(this.subtrees(second), first, second);
  }
}

/** Where the service serves the log of `projectSlug`: `checkpoint` and `tile/...` under it. */
export const logUrl = (baseUrl: string, projectSlug: string): string =>
  `${baseUrl.replace(/\/+$/, '')}/api/forum/logs/${encodeURIComponent(projectSlug)}`;

/** The service's tiles of one project, over HTTP. */
export function httpTiles(baseUrl: string, projectSlug: string, get: (url: string) => Promise<Response>): TileFetch {
  const base = logUrl(baseUrl, projectSlug);
  return async (path) => {
    const response = await get(`${base}/tile/${path}`);
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`GET tile/${path} answered ${response.status}`);
    }
    return new Uint8Array(await response.arrayBuffer());
  };
}
