import { createHash } from 'node:crypto';

/**
 * Merkle trees as RFC 6962 / RFC 9162 define them: leaf hash =
 * SHA-256(0x00 || leaf), interior node = SHA-256(0x01 || left || right),
 * and a tree of n leaves splits at the largest power of two below n.
 * Pure functions over 32-byte hashes. The proofs are written once, over any
 * source of subtree roots: the leaves themselves (the whole-tree functions
 * below) or a project's stored tiles (tiles.ts), which answer each subtree
 * from O(log n) stored hashes. Verifying proofs is the witness's side:
 * sdk/src/merkle.ts (WebCrypto), which the tests check against these.
 */
export type Hash = Uint8Array;

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

export function leafHash(leaf: Uint8Array | string): Hash {
  return createHash('sha256').update(LEAF_PREFIX).update(leaf).digest();
}

export function nodeHash(left: Hash, right: Hash): Hash {
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

/** MTH(D[start:end]) for 0 <= start < end: every range the proofs below ask for starts at a multiple of a power of two >= its length. */
export type SubtreeRoots = (start: number, end: number) => Hash;

/** MTH over already leaf-hashed entries; `leaves.slice(start, end)` without copying. */
function leafSubtrees(leaves: readonly Hash[]): SubtreeRoots {
  const root = (start: number, end: number): Hash => {
    const n = end - start;
    if (n === 1) return leaves[start] as Hash;
    const k = splitPoint(n);
    return nodeHash(root(start, start + k), root(start + k, end));
  };
  return root;
}

/** MTH(D[0:size]) from any source of subtree roots. */
export function treeRoot(subtrees: SubtreeRoots, size: number): Hash {
  return size === 0 ? emptyRoot() : subtrees(0, size);
}

function path(subtrees: SubtreeRoots, m: number, start: number, end: number): Hash[] {
  const n = end - start;
  if (n <= 1) return [];
  const k = splitPoint(n);
  if (m < k) return [...path(subtrees, m, start, start + k), subtrees(start + k, end)];
  return [...path(subtrees, m - k, start + k, end), subtrees(start, start + k)];
}

/** RFC 6962 PATH(index, D[treeSize]) from any source of subtree roots; the caller checks index < treeSize. */
export function auditPath(subtrees: SubtreeRoots, index: number, treeSize: number): Hash[] {
  return path(subtrees, index, 0, treeSize);
}

function subproof(subtrees: SubtreeRoots, m: number, start: number, end: number, complete: boolean): Hash[] {
  const n = end - start;
  if (m === n) return complete ? [] : [subtrees(start, end)];
  const k = splitPoint(n);
  if (m <= k) return [...subproof(subtrees, m, start, start + k, complete), subtrees(start + k, end)];
  return [...subproof(subtrees, m - k, start + k, end, false), subtrees(start, start + k)];
}

/** RFC 6962 PROOF(first, D[second]) from any source of subtree roots; the caller checks first <= second. */
export function consistencyPath(subtrees: SubtreeRoots, first: number, second: number): Hash[] {
  if (first === 0 || first === second) return [];
  return subproof(subtrees, first, 0, second, true);
}

/** Root hash of the tree whose leaf hashes are `leaves`. */
export function rootHash(leaves: readonly Hash[]): Hash {
  return treeRoot(leafSubtrees(leaves), leaves.length);
}

/** RFC 6962 PATH(index, D[treeSize]): the audit path of one leaf in the tree of the first `treeSize` leaves. */
export function inclusionProof(leaves: readonly Hash[], index: number, treeSize = leaves.length): Hash[] {
  if (!isSize(treeSize) || treeSize > leaves.length || !isSize(index) || index >= treeSize)
    throw new RangeError('leaf index outside the tree');
  return auditPath(leafSubtrees(leaves), index, treeSize);
}

/** RFC 6962 PROOF(first, D[second]): proves the tree of `first` leaves is a prefix of the tree of `second`. */
export function consistencyProof(leaves: readonly Hash[], first: number, second = leaves.length): Hash[] {
  if (!isSize(second) || second > leaves.length || !isSize(first) || first > second) throw new RangeError('tree sizes outside the log');
  return consistencyPath(leafSubtrees(leaves), first, second);
}
