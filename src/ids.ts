import { randomBytes, randomFillSync } from 'node:crypto';

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

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

/**
 * `size` bytes from the CSPRNG, as randomBytes gives them, drawn 4 KiB at a
 * time: one call into OpenSSL per 4 KiB instead of one per value (a
 * worker draws a record id per row and an ETag fingerprint per scope of
 * every command: one call each cost more than the rest of the id). Each
 * byte is handed out once, and a drawn pool is never refilled in place (a
 * fresh one replaces it), so a caller may keep what it got; the same
 * caching Node's randomUUID does.
 */
export function randomBytesPooled(size: number): Buffer {
  if (size > POOL_BYTES / 8) return randomBytes(size);
  if (used + size > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    used = 0;
  }
  used += size;
  return pool.subarray(used - size, used);
}

export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${encodeTime(now)}${encodeRandom(randomBytesPooled(16))}`;
}

/** A bound below every id `newId(prefix, ms)` can return at `ms` or later. */
export function idFloor(prefix: string, ms: number): string {
  return `${prefix}_${encodeTime(ms)}`;
}
