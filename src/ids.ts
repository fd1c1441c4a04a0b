import { randomBytes } from 'node:crypto';

/**
 * Opaque record ids that sort by creation time: a 10-character base32 time
 * prefix (milliseconds) and 80 random bits. Sortable ids make cursor
 * pagination a simple `id > cursor` range scan.
 */
const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';

function encodeTime(ms: number): string {
  let out = '';
  let rest = ms;
  for (let i = 0; i < 10; i++) {
    out = alphabet[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

function encodeRandom(bytes: Buffer): string {
  let out = '';
  for (const byte of bytes) out += alphabet[byte % 32];
  return out;
}

export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${encodeTime(now)}${encodeRandom(randomBytes(16))}`;
}

/** A bound below every id `newId(prefix, ms)` can return at `ms` or later. */
export function idFloor(prefix: string, ms: number): string {
  return `${prefix}_${encodeTime(ms)}`;
}
