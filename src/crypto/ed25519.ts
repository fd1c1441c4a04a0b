import * as ed from '@noble/ed25519';
import { fromBase64url, sha256, toBase64url } from './encoding.ts';

/** `SHA256:` + unpadded base64url of SHA-256 over the raw 32-byte public key (contract.md). */
export function keyFingerprint(publicKey: string): string {
  const raw = fromBase64url(publicKey, 32);
  if (!raw) throw new Error('not a raw Ed25519 public key');
  return `SHA256:${toBase64url(sha256(raw))}`;
}

export function isPublicKey(text: string): boolean {
  const raw = fromBase64url(text, 32);
  if (!raw) return false;
  try {
    ed.Point.fromBytes(raw);
    return true;
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
    return await ed.verifyAsync(sig, new TextEncoder().encode(message), key);
  } catch {
    return false;
  }
}
