import { hash, randomBytes } from 'node:crypto';

const base64urlPattern = /^[A-Za-z0-9_-]*$/;

export function toBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

/** Decodes unpadded base64url, or returns null when the text is not canonical base64url of `length` bytes. */
export function fromBase64url(text: string, length?: number): Uint8Array | null {
  if (!base64urlPattern.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) return null;
  if (length !== undefined && bytes.length !== length) return null;
  return new Uint8Array(bytes);
}

// crypto.hash: one call into OpenSSL, without a Hash object per digest (three per write on the API's path).
export function sha256(data: string | Uint8Array): Buffer {
  return hash('sha256', data, 'buffer');
}

export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
