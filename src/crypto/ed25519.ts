import * as ed from '@noble/ed25519';
import { fromBase64url, sha256, toBase64url } from './encoding.ts';

/** `SHA256:` + unpadded base64url of SHA-256 over the raw 32-byte public key (contract.md). */
export function keyFingerprint(publicKey: string): string {
  const raw = fromBase64url(publicKey, 32);
  if (!raw) throw new Error('not a raw Ed25519 public key');
  return `SHA256:${toBase64url(sha256(raw))}`;
}

/** In the prime-order subgroup: what a key or nonce point made from a private scalar always is. */
function isPrimeOrderPoint(bytes: Uint8Array): boolean {
  const point = ed.Point.fromBytes(bytes);
  return !point.isSmallOrder() && point.isTorsionFree();
}

/**
 * A canonical point some private key yields. A small-order key would let one
 * signature verify every message (proof of control of no key at all), and a
 * mixed-order one comes from no private key.
 */
export function isPublicKey(text: string): boolean {
  const raw = fromBase64url(text, 32);
  if (!raw) return false;
  try {
    return isPrimeOrderPoint(raw);
  } catch {
    return false;
  }
}

export function isSignatureFormat(text: string): boolean {
  return fromBase64url(text, 64) !== null;
}

/** Verifies a raw Ed25519 signature over the exact UTF-8 bytes of `message`. */
export async function verifySignature(publicKey: string, message: string, signature: string): Promise<boolean> {
  const key = fromBase64url(publicKey, 32);
  const sig = fromBase64url(signature, 64);
  if (!key || !sig) return false;
  try {
    // Strict RFC 8032, as node:crypto and so any witness checks it: noble's default (ZIP-215,
    // cofactored) also accepts non-canonical encodings and an R with a small-order component.
    if (!isPrimeOrderPoint(key) || !isPrimeOrderPoint(sig.subarray(0, 32))) return false;
    return await ed.verifyAsync(sig, new TextEncoder().encode(message), key, { zip215: false });
  } catch {
    return false;
  }
}
