import { fromBase64, toBase64 } from './encoding.ts';
import { chainSteps, type ExportedTiles, type LedgerExport } from './ledgerExport.ts';
import { decodeHash, verifyConsistency, verifyInclusion, type Hash } from './merkle.ts';
import { hashesOf, perfectRoot, TILE_WIDTH, TileLog, tilePath, tilesOfTree, type TileAddress } from './tiles.ts';

/**
 * The witness's check of the tiles a tlog client reads: they are exactly
 * the tree of the events (level 0 the recomputed leaves, each entry above
 * the root of the 256 below it), and the roots and proofs computed from
 * them, not taken from the service, hold against every signed checkpoint.
 */
export interface TileVerification {
  treeSize: number;
  tiles: number;
}

type Check = (condition: boolean, failure: string) => boolean;

function decodeTile(text: string | undefined): Uint8Array {
  try {
    return fromBase64(text ?? '');
  } catch {
    return new Uint8Array();
  }
}

const sameHash = (a: Hash | undefined, b: Hash): boolean => a !== undefined && toBase64(a) === toBase64(b);

/** The entries of each level the exported tiles hold, by index, and the tiles a TileLog may read; a tile of the wrong length is left out. */
function readTiles(check: Check, { treeSize, tiles }: ExportedTiles): { levels: Hash[][]; log: TileLog; held: TileAddress[] } {
  const levels: Hash[][] = [];
  const log = new TileLog((path) => Promise.reject(new Error(`tile ${path} is not in the export`)));
  const held: TileAddress[] = [];
  const wanted = tilesOfTree(treeSize);
  const known = new Set(wanted.map(tilePath));
  for (const path of Object.keys(tiles)) check(known.has(path), `tile ${path}: not a tile of the tree of ${treeSize} leaves`);
  for (const address of wanted) {
    const path = tilePath(address);
    const bytes = decodeTile(tiles[path]);
    if (!check(bytes.length === address.width * 32, `tile ${path}: missing, or not ${address.width} hashes`)) continue;
    log.hold(address, bytes);
    held.push(address);
    const level = (levels[address.level] ??= []);
    for (const [i, hash] of hashesOf(bytes).entries()) level[address.index * TILE_WIDTH + i] = hash;
  }
  return { levels, log, held };
}

/** Each tile's entries against what they must be; one line per tile, at its first entry that differs, so a rewritten tile is not hundreds of lines. */
async function checkEntries(check: Check, file: LedgerExport, leaves: readonly Hash[], levels: Hash[][], held: TileAddress[]) {
  for (const address of held) {
    const entries = levels[address.level]!;
    const below = levels[address.level - 1] ?? [];
    for (let i = 0; i < address.width; i++) {
      const at = address.index * TILE_WIDTH + i;
      const children = below.slice(at * TILE_WIDTH, (at + 1) * TILE_WIDTH).filter(Boolean);
      // A tile missing below is named already; what it would have proved is left unchecked, not failed twice.
      if (address.level > 0 && children.length < TILE_WIDTH) continue;
      const expected = address.level === 0 ? leaves[at]! : await perfectRoot(children);
      const what =
        address.level === 0
          ? `the leaf recomputed from event ${file.events[at]?.eventId}`
          : `the root of the ${TILE_WIDTH} entries below it`;
      if (!check(sameHash(entries[at], expected), `tile ${tilePath(address)}: entry ${i} differs from ${what}`)) break;
    }
  }
}

/** Runs a computation over the tiles; a tile it needs that the export lacks (already named) makes it fail like a wrong one. */
async function fromTiles<T>(compute: () => Promise<T>): Promise<T | null> {
  try {
    return await compute();
  } catch {
    return null;
  }
}

/** Checks the export's tiles, or returns null when it holds none (files exported before the service served them). */
export async function checkTiles(check: Check, file: LedgerExport, leaves: readonly Hash[]): Promise<TileVerification | null> {
  if (!file.tiles) return null;
  const { treeSize } = file.tiles;
  if (!check(treeSize === leaves.length, `tiles: taken of a tree of ${treeSize} leaves, the export has ${leaves.length} events`))
    return { treeSize, tiles: 0 };
  const { levels, log, held } = readTiles(check, file.tiles);
  await checkEntries(check, file, leaves, levels, held);
  for (const c of file.checkpoints) {
    const size = c.treeSize;
    // checkCheckpoint names a size outside the ledger.
    if (!(Number.isInteger(size) && size >= 1 && size <= treeSize)) continue;
    const id = `checkpoint ${c.checkpointId}`;
    const root = decodeHash(c.rootHash);
    const computed = await fromTiles(() => log.root(size));
    check(
      computed !== null && sameHash(computed, root),
      `${id}: its root differs from the root of the first ${size} leaves computed from tiles`,
    );
    const path = await fromTiles(() => log.inclusionProof(size - 1, size));
    check(
      path !== null && (await verifyInclusion(leaves[size - 1]!, size - 1, size, path, root)),
      `${id}: inclusion proof of event ${c.lastEventId} computed from tiles fails`,
    );
  }
  for (const [prev, next] of chainSteps(file.checkpoints)) {
    if (!(prev.treeSize >= 1 && prev.treeSize <= next.treeSize && next.treeSize <= treeSize)) continue;
    const proof = await fromTiles(() => log.consistencyProof(prev.treeSize, next.treeSize));
    check(
      proof !== null &&
        (await verifyConsistency(prev.treeSize, next.treeSize, decodeHash(prev.rootHash), decodeHash(next.rootHash), proof)),
      `chain ${next.signerFingerprint}: consistency ${prev.treeSize} -> ${next.treeSize} computed from tiles fails`,
    );
  }
  return { treeSize, tiles: held.length };
}
