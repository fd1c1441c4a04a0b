import { createHash } from 'node:crypto';

/**
 * Merkle trees as RFC 6962 / RFC 9162 define them: leaf hash =
 * SHA-256(0x00 || leaf), interior node = SHA-256(0x01 || left || right),
 * and a tree of n leaves splits at the largest power of two below n.
 * Pure functions over 32-byte hashes, so the server, the verifier command
 * and any witness compute exactly the same values.
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

export function hashesEqual(a: Hash, b: Hash): boolean {
  return a.length === b.length && Buffer.from(a).equals(Buffer.from(b));
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
  if (!isSize(treeSize) || treeSize > leaves.length || !isSize(index) || index >= treeSize) throw new RangeError('leaf index outside the tree');
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

const isOdd = (n: number): boolean => n % 2 === 1;
const isPowerOfTwo = (n: number): boolean => n > 0 && n === splitPoint(n + 1);
const half = (n: number): number => Math.floor(n / 2);

/** RFC 9162 section 2.1.3.2: does `proof` place `leaf` at `index` in the tree of `treeSize` leaves with `root`? */
export function verifyInclusion(leaf: Hash, index: number, treeSize: number, proof: readonly Hash[], root: Hash): boolean {
  if (!isSize(index) || !isSize(treeSize) || index >= treeSize) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && hashesEqual(r, root);
}

/** RFC 9162 section 2.1.4.2: is the tree (`first`, `firstRoot`) a prefix of (`second`, `secondRoot`)? */
export function verifyConsistency(first: number, second: number, firstRoot: Hash, secondRoot: Hash, proof: readonly Hash[]): boolean {
  if (!isSize(first) || !isSize(second) || first > second) return false;
  if (first === second) return proof.length === 0 && hashesEqual(firstRoot, secondRoot);
  // Every tree extends the empty tree; there is nothing to prove.
  if (first === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0] as Hash;
  let sr = path[0] as Hash;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && hashesEqual(fr, firstRoot) && hashesEqual(sr, secondRoot);
}

