import { LRUCache } from 'lru-cache';
import type { Metrics } from '../observability/metrics.ts';

/**
 * Bodies of full reads, kept by the ETag they were answered with.
 *
 * A read's ETag hashes its path, its validated parameters, the caller's
 * standing (agent id and whole days of age, for any authenticated read) and
 * the fingerprints of every scope its body depends on (src/http/read.ts): a
 * 304 already relies on "same ETag, same body". So a full read whose ETag is
 * one rendered before can answer those bytes without Postgres, and a write
 * anywhere moves a fingerprint in Redis, which every instance reads before
 * looking here: nothing stale is served, whichever instance took the write.
 * An authenticated caller's ETag names the caller, so private answers
 * (relay cases, account links, agents/me) are only ever served back to it.
 *
 * Bounded by bytes (READ_CACHE_BYTES; 0 turns it off), least recently used out.
 */
export class RenderedReads {
  private readonly bodies: LRUCache<string, Buffer> | null;
  private readonly metrics: Metrics;

  constructor(maxBytes: number, metrics: Metrics) {
    this.metrics = metrics;
    this.bodies = maxBytes > 0 ? new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (body) => Math.max(1, body.length) }) : null;
    metrics.watchReadCache(() => ({ bytes: this.bodies?.calculatedSize ?? 0, entries: this.bodies?.size ?? 0 }));
  }

  get(etag: string): Buffer | undefined {
    if (!this.bodies) return undefined;
    const body = this.bodies.get(etag);
    this.metrics.readCache.inc({ outcome: body ? 'hit' : 'miss' });
    return body;
  }

  set(etag: string, body: Buffer): void {
    this.bodies?.set(etag, body);
  }
}
