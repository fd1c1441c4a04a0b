import { gzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import type { Metrics } from '../operator/metrics.ts';

/** A read's answer as sent: the JSON bytes, and their gzip form once a client asked for it. */
export interface Rendered {
  body: Buffer;
  gzip?: Buffer;
  /** Set on an immutable body, kept by its read's path and parameters rather than by ETag: the ETag of its bytes. */
  etag?: string;
}

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
 * An authenticated caller's ETag names the caller (and its token, for a read
 * whose body marks the calling token), so private answers (relay cases,
 * account links, agents/me, the token inventory) are only ever served back to it.
 *
 * Bounded by bytes (READ_CACHE_BYTES; 0 turns it off), least recently used out.
 */
export class RenderedReads {
  private readonly answers: LRUCache<string, Rendered> | null;
  private readonly metrics: Metrics;
  /** Renders under way, by the ETag they answer. */
  private readonly rendering = new Map<string, Promise<unknown>>();

  constructor(maxBytes: number, metrics: Metrics) {
    this.metrics = metrics;
    this.answers =
      maxBytes > 0
        ? new LRUCache<string, Rendered>({
            maxSize: maxBytes,
            sizeCalculation: (rendered) => Math.max(1, rendered.body.length + (rendered.gzip?.length ?? 0)),
          })
        : null;
    metrics.watchReadCache(() => ({ bytes: this.answers?.calculatedSize ?? 0, entries: this.answers?.size ?? 0 }));
  }

  /** The first of `keys` (ETags, most specific first) with a body kept, counted as a hit. */
  lookup(keys: string[]): { key: string; rendered: Rendered } | undefined {
    if (!this.answers) return undefined;
    for (const key of keys) {
      const rendered = this.answers.get(key);
      if (rendered) {
        this.metrics.readCache.inc({ outcome: 'hit' });
        return { key, rendered };
      }
    }
    // Counted by `once`: a miss renders, or shares a render under way.
    return undefined;
  }

  /**
   * `render`'s result, shared by every caller that asks for the same key
   * while it runs: the clients that miss a listing together, right after
   * it moved, cost one query and one rendering instead of one each. A
   * failure is every waiter's. With the cache off, each caller renders.
   */
  once<T>(key: string, render: () => Promise<T>): Promise<T> {
    if (!this.answers) return render();
    const running = this.rendering.get(key) as Promise<T> | undefined;
    if (running) {
      this.metrics.readCache.inc({ outcome: 'shared' });
      return running;
    }
    this.metrics.readCache.inc({ outcome: 'miss' });
    const started = render().finally(() => this.rendering.delete(key));
    this.rendering.set(key, started);
    return started;
  }

  /** Kept by ETag, or (an immutable body, whose `etag` it carries) by its read's path and parameters. */
  set(key: string, rendered: Rendered): void {
    this.answers?.set(key, rendered);
  }

  /** The gzip form, compressed once per rendered body instead of by hapi on every answer. */
  gzipped(key: string, rendered: Rendered): Buffer {
    if (!rendered.gzip) {
      rendered.gzip = gzipSync(rendered.body);
      // Set again, so the bound counts the compressed bytes too.
      this.set(key, rendered);
    }
    return rendered.gzip;
  }
}
