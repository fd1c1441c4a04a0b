import { fromBase64, sha256 } from './encoding.ts';

/**
 * RFC 6962 / RFC 9162 Merkle trees with WebCrypto: leaf = SHA-256(0x00 ||
 * leaf bytes), node = SHA-256(0x01 || left || right), split at the largest
 * power of two below n. What a witness needs to check the service's ledger
 * without trusting anything it computed: roots, the RFC 9162 proof checks,
 * and the proofs themselves over any source of subtree roots (a log's
 * tiles, tiles.ts), so a verifier need not take the service's proofs.
 */
export type Hash = Uint8Array;

/** A hash as the service writes it (standard base64 of 32 bytes); anything else is the empty hash, which no check accepts. */
export const decodeHash = (text: string): Hash => (/^[A-Za-z0-9+/]{43}=$/.test(text) ? fromBase64(text) : new Uint8Array());

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export const leafHash = (leaf: Uint8Array): Promise<Hash> => sha256(concat(Uint8Array.of(0), leaf));
export const nodeHash = (left: Hash, right: Hash): Promise<Hash> => sha256(concat(Uint8Array.of(1), left, right));

function hashesEqual(a: Hash, b: Hash): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[start:end]), 0 <= start < end: every range the proofs below ask for starts at a multiple of a power of two >= its length. */
export type SubtreeRoots = (start: number, end: number) => Promise<Hash>;

/** MTH(D[0:size]) from any source of subtree roots (tiles.ts reads them from a log's tiles). */
export function treeRoot(subtrees: SubtreeRoots, size: number): Promise<Hash> {
  return size === 0 ? sha256(new Uint8Array()) : subtrees(0, size);
}

async function path(subtrees: SubtreeRoots, m: number, start: number, end: number): Promise<Hash[]> {
  const n = end - start;
  if (n <= 1) return [];
  const k = splitPoint(n);
  if (m < k) return [...(await path(subtrees, m, start, start + k)), await subtrees(start + k, end)];
  return [...(await path(subtrees, m - k, start + k, end)), await subtrees(start, start + k)];
}

/** RFC 6962 PATH(index, D[treeSize]); the caller checks index < treeSize. */
export function auditPath(subtrees: SubtreeRoots, index: number, treeSize: number): Promise<Hash[]> {
  return path(subtrees, index, 0, treeSize);
}

async function subproof(subtrees: SubtreeRoots, m: number, start: number, end: number, complete: boolean): Promise<Hash[]> {
  const n = end - start;
  if (m === n) return complete ? [] : [await subtrees(start, end)];
  const k = splitPoint(n);
  if (m <= k) return [...(await subproof(subtrees, m, start, start + k, complete)), await subtrees(start + k, end)];
  return [...(await subproof(subtrees, m - k, start + k, end, false)), await subtrees(start, start + k)];
}

/** RFC 6962 PROOF(first, D[second]); the caller checks first <= second. */
export async function consistencyPath(subtrees: SubtreeRoots, first: number, second: number): Promise<Hash[]> {
  return first === 0 || first === second ? [] : subproof(subtrees, first, 0, second, true);
}

/** Root of the tree whose leaf hashes are `leaves`. */
export async function rootHash(leaves: readonly Hash[]): Promise<Hash> {
  if (leaves.length === 0) return sha256(new Uint8Array());
  let level = [...leaves];
  // Bottom-up pairing gives the same root as RFC 6962's recursive split: a lone last node rises unchanged.
  while (level.length > 1) {
    const next: Hash[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? await nodeHash(level[i]!, level[i + 1]!) : level[i]!);
    level = next;
  }
  return level[0]!;
}

const isSize = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
const isOdd = (n: number): boolean => n % 2 === 1;
const isPowerOfTwo = (n: number): boolean => n > 0 && n === splitPoint(n + 1);
const half = (n: number): number => Math.floor(n / 2);

/** RFC 9162 section 2.1.3.2: does `proof` place `leaf` at `index` in the tree of `treeSize` leaves with `root`? */
export async function verifyInclusion(leaf: Hash, index: number, treeSize: number, proof: readonly Hash[], root: Hash): Promise<boolean> {
  if (!isSize(index) || !isSize(treeSize) || index >= treeSize) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      r = await nodeHash(p, r);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && hashesEqual(r, root);
}

/** RFC 9162 section 2.1.4.2: is the tree (`first`, `firstRoot`) a prefix of (`second`, `secondRoot`)? */
export async function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Hash,
  secondRoot: Hash,
  proof: readonly Hash[],
): Promise<boolean> {
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
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && hashesEqual(fr, firstRoot) && hashesEqual(sr, secondRoot);
}
