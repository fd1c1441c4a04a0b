import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { consistencyProof, emptyRoot, inclusionProof, leafHash, rootHash, type Hash } from '../../src/ledger/merkle.ts';
// What a witness verifies with: the SDK's WebCrypto implementation, checked against the server's proofs.
import { rootHash as witnessRoot, verifyConsistency, verifyInclusion } from '../../sdk/src/merkle.ts';

/**
 * An independent, deliberately naive RFC 6962 implementation over the raw
 * leaf data (section 2.1 written out literally), to check the module against.
 */
const sha = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const largestPowerBelow = (n: number): number => 2 ** Math.ceil(Math.log2(n) - 1);
function mth(data: Buffer[]): Buffer {
  if (data.length === 0) return sha();
  if (data.length === 1) return sha(Buffer.from([0]), data[0]!);
  const k = largestPowerBelow(data.length);
  return sha(Buffer.from([1]), mth(data.slice(0, k)), mth(data.slice(k)));
}
function naivePath(m: number, data: Buffer[]): Buffer[] {
  if (data.length <= 1) return [];
  const k = largestPowerBelow(data.length);
  return m < k ? [...naivePath(m, data.slice(0, k)), mth(data.slice(k))] : [...naivePath(m - k, data.slice(k)), mth(data.slice(0, k))];
}
function naiveSubproof(m: number, data: Buffer[], b: boolean): Buffer[] {
  if (m === data.length) return b ? [] : [mth(data)];
  const k = largestPowerBelow(data.length);
  return m <= k
    ? [...naiveSubproof(m, data.slice(0, k), b), mth(data.slice(k))]
    : [...naiveSubproof(m - k, data.slice(k), false), mth(data.slice(0, k))];
}

const dataOf = (n: number): Buffer[] => Array.from({ length: n }, (_, i) => Buffer.from(`leaf ${i}`));
const hex = (h: Hash): string => Buffer.from(h).toString('hex');
const hexAll = (hs: Hash[]): string[] => hs.map(hex);

describe('RFC 6962 Merkle tree', () => {
  it('hashes the empty tree, one leaf and two leaves exactly as RFC 6962 defines', async () => {
    expect(hex(emptyRoot())).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hex(leafHash(Buffer.alloc(0)))).toBe('6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
    const a = leafHash('a');
    const b = leafHash('b');
    expect(hex(rootHash([a, b]))).toBe(sha(Buffer.from([1]), a, b).toString('hex'));
  });

  it('reproduces the certificate-transparency reference roots for trees of 1 to 8 leaves', async () => {
    const ctLeaves = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((h) =>
      leafHash(Buffer.from(h, 'hex')),
    );
    const ctRoots = [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
      'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
      '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
      '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
      'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
      '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
    ];
    expect(ctRoots.map((_, i) => hex(rootHash(ctLeaves.slice(0, i + 1))))).toEqual(ctRoots);
  });

  it('matches the independent implementation for every tree size up to 40', async () => {
    for (let n = 0; n <= 40; n++) {
      const data = dataOf(n);
      expect(hex(rootHash(data.map((d) => leafHash(d)))), `size ${n}`).toBe(hex(mth(data)));
    }
  });

  it('computes the same roots as the SDK’s WebCrypto implementation a witness uses', async () => {
    for (let n = 0; n <= 20; n++) {
      const leaves = dataOf(n).map((d) => leafHash(d));
      expect(Buffer.from(await witnessRoot(leaves)).equals(Buffer.from(rootHash(leaves))), `size ${n}`).toBe(true);
    }
  });

  it('builds the same inclusion proofs as the independent implementation and they verify', async () => {
    for (let n = 1; n <= 24; n++) {
      const data = dataOf(n);
      const leaves = data.map((d) => leafHash(d));
      const root = mth(data);
      for (let m = 0; m < n; m++) {
        const proof = inclusionProof(leaves, m);
        expect(hexAll(proof), `leaf ${m} of ${n}`).toEqual(hexAll(naivePath(m, data)));
        expect(await verifyInclusion(leaves[m]!, m, n, proof, root)).toBe(true);
      }
    }
  });

  it('builds the same consistency proofs as the independent implementation and they verify', async () => {
    for (let n = 1; n <= 24; n++) {
      const data = dataOf(n);
      const leaves = data.map((d) => leafHash(d));
      for (let m = 1; m <= n; m++) {
        const proof = consistencyProof(leaves, m, n);
        expect(hexAll(proof), `${m} -> ${n}`).toEqual(m === n ? [] : hexAll(naiveSubproof(m, data, true)));
        expect(await verifyConsistency(m, n, mth(data.slice(0, m)), mth(data), proof), `${m} -> ${n}`).toBe(true);
      }
    }
  });

  it('proves inclusion and consistency within a prefix of the leaves', async () => {
    const data = dataOf(13);
    const leaves = data.map((d) => leafHash(d));
    expect(await verifyInclusion(leaves[4]!, 4, 7, inclusionProof(leaves, 4, 7), mth(data.slice(0, 7)))).toBe(true);
    expect(await verifyConsistency(3, 7, mth(data.slice(0, 3)), mth(data.slice(0, 7)), consistencyProof(leaves, 3, 7))).toBe(true);
  });

  it('rejects an inclusion proof for a tampered leaf, a wrong index, a wrong size or a flipped path bit', async () => {
    const data = dataOf(11);
    const leaves = data.map((d) => leafHash(d));
    const root = mth(data);
    const proof = inclusionProof(leaves, 6);
    expect(await verifyInclusion(leafHash('tampered'), 6, 11, proof, root)).toBe(false);
    expect(await verifyInclusion(leaves[6]!, 5, 11, proof, root)).toBe(false);
    // A size only shapes the path; one that changes the shape fails (the signed checkpoint binds the real size).
    expect(await verifyInclusion(leaves[6]!, 6, 7, proof, root)).toBe(false);
    expect(await verifyInclusion(leaves[6]!, 6, 11, proof.slice(1), root)).toBe(false);
    expect(await verifyInclusion(leaves[6]!, 11, 11, proof, root)).toBe(false);
    const flipped = proof.map((h, i) => (i === 1 ? Buffer.from(h).map((byte, j) => (j === 0 ? byte ^ 1 : byte)) : h));
    expect(await verifyInclusion(leaves[6]!, 6, 11, flipped, root)).toBe(false);
  });

  it('rejects a consistency proof against a rewritten history, wrong roots or wrong sizes', async () => {
    const data = dataOf(14);
    const leaves = data.map((d) => leafHash(d));
    const proof = consistencyProof(leaves, 5, 14);
    const firstRoot = mth(data.slice(0, 5));
    const secondRoot = mth(data);
    const rewritten = [...data.slice(0, 2), Buffer.from('forged'), ...data.slice(3)];
    expect(await verifyConsistency(5, 14, mth(rewritten.slice(0, 5)), secondRoot, proof)).toBe(false);
    expect(await verifyConsistency(5, 14, firstRoot, mth(rewritten), proof)).toBe(false);
    expect(await verifyConsistency(6, 14, firstRoot, secondRoot, proof)).toBe(false);
    expect(await verifyConsistency(5, 8, firstRoot, secondRoot, proof)).toBe(false);
    expect(await verifyConsistency(5, 14, firstRoot, secondRoot, proof.slice(0, -1))).toBe(false);
    expect(await verifyConsistency(5, 14, firstRoot, secondRoot, [])).toBe(false);
    expect(await verifyConsistency(14, 5, secondRoot, firstRoot, proof)).toBe(false);
  });

  it('treats equal sizes as consistent only with equal roots and an empty proof', async () => {
    const data = dataOf(4);
    expect(await verifyConsistency(4, 4, mth(data), mth(data), [])).toBe(true);
    expect(await verifyConsistency(4, 4, mth(data), mth(dataOf(5)), [])).toBe(false);
    expect(await verifyConsistency(0, 4, emptyRoot(), mth(data), [])).toBe(true);
  });

  it('refuses to build proofs outside the tree', async () => {
    const leaves = dataOf(3).map((d) => leafHash(d));
    expect(() => inclusionProof(leaves, 3)).toThrow(RangeError);
    expect(() => inclusionProof(leaves, 0, 4)).toThrow(RangeError);
    expect(() => consistencyProof(leaves, 4, 3)).toThrow(RangeError);
  });

  it('refuses a consistency proof from a tree larger than the one it extends', async () => {
    const leaves = dataOf(5).map((d) => leafHash(d));
    expect(() => consistencyProof(leaves, 3, 2)).toThrow(new RangeError('tree sizes outside the log'));
    expect(() => consistencyProof(leaves, 4, 3)).toThrow(new RangeError('tree sizes outside the log'));
  });

  it('proves consistency with the empty tree by an empty proof', async () => {
    const leaves = dataOf(5).map((d) => leafHash(d));
    expect(consistencyProof(leaves, 0, 5)).toEqual([]);
    expect(consistencyProof(leaves, 0)).toEqual([]);
  });

  it('refuses an inclusion proof for a negative or fractional leaf index', async () => {
    const leaves = dataOf(3).map((d) => leafHash(d));
    expect(() => inclusionProof(leaves, -1)).toThrow('leaf index outside the tree');
    expect(() => inclusionProof(leaves, 0.5)).toThrow('leaf index outside the tree');
  });

  it('refuses an inclusion proof in a tree of fractional or excessive size', async () => {
    const leaves = dataOf(3).map((d) => leafHash(d));
    expect(() => inclusionProof(leaves, 0, 2.5)).toThrow('leaf index outside the tree');
    expect(() => inclusionProof(leaves, 0, Number.MAX_SAFE_INTEGER + 1)).toThrow('leaf index outside the tree');
  });

  it('refuses a consistency proof from a negative or fractional tree size', async () => {
    const leaves = dataOf(3).map((d) => leafHash(d));
    expect(() => consistencyProof(leaves, -1, 3)).toThrow('tree sizes outside the log');
    expect(() => consistencyProof(leaves, 1.5, 3)).toThrow('tree sizes outside the log');
  });

  it('refuses a consistency proof to a tree larger than the log or of fractional size', async () => {
    const leaves = dataOf(3).map((d) => leafHash(d));
    expect(() => consistencyProof(leaves, 1, 4)).toThrow('tree sizes outside the log');
    expect(() => consistencyProof(leaves, 1, 2.5)).toThrow('tree sizes outside the log');
  });
});
