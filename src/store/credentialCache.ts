import type { ChainableCommander } from 'ioredis';
import type { RedisClient, RedisKeys } from '../redis.ts';

/** How long a token's lookup is reused: also how stale an agent's tier and a token's lastUsedAt may be. */
const CREDENTIAL_TTL_SECONDS = 60;
/** Longer than any API instance takes between its Postgres lookup and its cache fill. */
const TOMBSTONE_TTL_SECONDS = 120;
const TOMBSTONE = 'expired';

/** A live token and what a request needs of its agent: who it is, and the signals its tier comes from. */
export interface CachedCredential {
  tokenId: string;
  agentId: string;
  handle: string;
  fingerprint: string;
  standing: { createdAt: string; postCount: number; votesCast: number; supportReceived: number; contestReceived: number };
}

/**
 * Token lookups cached in Redis, shared by every API instance, so an
 * authenticated request needs no Postgres. Revocation is immediate on every
 * instance: after commit and before the reply leaves, the worker overwrites
 * the affected tokens' entries with a tombstone, and a fill only writes where
 * no key exists (SET NX), so a lookup that raced the revocation cannot put
 * the token back.
 */
export class CredentialCache {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  /** The cached credential; null when nothing usable is cached (never looked up, expired, or revoked meanwhile). */
  async get(tokenHash: string): Promise<CachedCredential | null> {
    const raw = await this.redis.get(this.keys.credential(tokenHash));
    return raw && raw !== TOMBSTONE ? (JSON.parse(raw) as CachedCredential) : null;
  }

  async fill(tokenHash: string, credential: CachedCredential): Promise<void> {
    await this.redis.set(this.keys.credential(tokenHash), JSON.stringify(credential), 'EX', CREDENTIAL_TTL_SECONDS, 'NX');
  }

  /**
   * Queues tombstones for tokens whose credential changed (revoked, or their
   * agent's key rotated), and announces the change to every API instance, so
   * that event streams opened with a revoked token end (src/http/sse.ts).
   */
  expire(pipeline: ChainableCommander, tokenHashes: string[]): void {
    const hashes = [...new Set(tokenHashes)];
    if (hashes.length === 0) return;
    for (const hash of hashes) pipeline.set(this.keys.credential(hash), TOMBSTONE, 'EX', TOMBSTONE_TTL_SECONDS);
    pipeline.publish(this.keys.credentialsChanged, hashes.join(','));
  }
}
