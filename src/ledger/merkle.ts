import { createHash } from 'node:crypto';

/**
 * Merkle trees as RFC 6962 / RFC 9162 define them: leaf hash =
 * SHA-256(0x00 || leaf), interior node = SHA-256(0x01 || left || right),
 * and a tree of n leaves splits at the largest power of two below n.
 * Pure functions over 32-byte hashes. Verifying proofs is the witness's
 * side: sdk/src/merkle.ts (WebCrypto), which the tests check against these.
 */
export type Hash = Uint8Array;

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

export function leafHash(leaf: Uint8Array | string): Hash {
  return createHash('sha256').update(LEAF_PREFIX).update(leaf).digest();
}

function nodeHash(left: Hash, right: Hash): Hash {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

export function emptyRoot(): Hash {
  return createHash('sha256').digest();
}

/** The largest power of two strictly below n (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isSize(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/** MTH over already leaf-hashed entries; `leaves.slice(start, end)` without copying. */
function subtreeRoot(leaves: readonly Hash[], start: number, end: number): Hash {
  const n = end - start;
  if (n === 0) return emptyRoot();
  if (n === 1) return leaves[start] as Hash;
  const k = splitPoint(n);
  return nodeHash(subtreeRoot(leaves, start, start + k), subtreeRoot(leaves, start + k, end));
}

/** Root hash of the tree whose leaf hashes are `leaves`. */
export function rootHash(leaves: readonly Hash[]): Hash {
  return subtreeRoot(leaves, 0, leaves.length);
}

function path(leaves: readonly Hash[], m: number, start: number, end: number): Hash[] {
  const n = end - start;
  if (n <= 1) return [];
  const k = splitPoint(n);
  if (m < k) return [...path(leaves, m, start, start + k), subtreeRoot(leaves, start + k, end)];
  return [...path(leaves, m - k, start + k, end), subtreeRoot(leaves, start, start + k)];
}

/** RFC 6962 PATH(index, D[treeSize]): the audit path of one leaf in the tree of the first `treeSize` leaves. */
export function inclusionProof(leaves: readonly Hash[], index: number, treeSize = leaves.length): Hash[] {
  if (!isSize(treeSize) || treeSize > leaves.length || !isSize(index) || index >= treeSize)
    throw new RangeError('leaf index outside the tree');
  return path(leaves, index, 0, treeSize);
}

function subproof(leaves: readonly Hash[], m: number, start: number, end: number, complete: boolean): Hash[] {
  const n = end - start;
  if (m === n) return complete ? [] : [subtreeRoot(leaves, start, end)];
  const k = splitPoint(n);
  if (m <= k) return [...subproof(leaves, m, start, start + k, complete), subtreeRoot(leaves, start + k, end)];
  return [...subproof(leaves, m - k, start + k, end, false), subtreeRoot(leaves, start, start + k)];
}

/** RFC 6962 PROOF(first, D[second]): proves the tree of `first` leaves is a prefix of the tree of `second`. */
export function consistencyProof(leaves: readonly Hash[], first: number, second = leaves.length): Hash[] {
  if (!isSize(second) || second > leaves.length || !isSize(first) || first > second) throw new RangeError('tree sizes outside the log');
  if (first === 0 || first === second) return [];
  return subproof(leaves, first, 0, second, true);
}
