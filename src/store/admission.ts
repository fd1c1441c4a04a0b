import type { RedisClient } from '../redis.ts';
import { PENDING_CLAIM_TTL_SECONDS, type Claim, type IdempotencyStore } from './idempotencyStore.ts';
import { rateDecision, refillPerMs, TAKE_TOKEN_LUA, type BucketLimit, type RateDecision, type RateLimiter } from './rateLimiter.ts';

/**
 * A mutation with a retry key, in one round trip: a key seen before answers
 * its entry (no token taken: replays are free); otherwise a token is taken
 * and, only if one was, the key is claimed with ARGV[3] for ARGV[4] seconds.
 */
const claimAndTakeScript = `
local existing = redis.call('GET', KEYS[2])
if existing then return { -1, '0', existing } end
${TAKE_TOKEN_LUA}
if allowed == 1 then redis.call('SET', KEYS[2], ARGV[3], 'EX', tonumber(ARGV[4])) end
return { allowed, tostring(tokens) }
`;

/** A retry key about to be claimed: where it lives, what the request was, and who waits for its result. */
export interface RetryKeyClaim {
  cacheKey: string;
  fingerprint: string;
  commandId: string;
  replyTo: string;
}

/** Seen before: what the earlier entry means to this request. Otherwise: the rate decision (the key is claimed if it allowed). */
export type Admitted = { seen: Claim } | { decision: RateDecision };

/**
 * Admission of a mutation: its rate-limit token and, with a retry key, the
 * key's claim, decided together in Redis so that a replay costs no token and
 * a refused request claims nothing. The bucket's arithmetic is the rate
 * limiter's; the entry's format is the retry-key store's.
 */
export class AdmissionStore {
  private readonly redis: RedisClient;
  private readonly limiter: RateLimiter;
  private readonly retryKeys: IdempotencyStore;

  constructor(redis: RedisClient, limiter: RateLimiter, retryKeys: IdempotencyStore) {
    this.redis = redis;
    this.limiter = limiter;
    this.retryKeys = retryKeys;
    redis.defineCommand('agoraClaimAndTakeToken', { numberOfKeys: 2, lua: claimAndTakeScript });
  }

  /** A request without a retry key: a token, or a refusal. */
  take(bucket: string, limit: BucketLimit): Promise<RateDecision> {
    return this.limiter.take(bucket, limit);
  }

  /** A request with a retry key: the key's earlier entry, or a token with the key claimed. */
  async claimAndTake(bucket: string, limit: BucketLimit, claim: RetryKeyClaim): Promise<Admitted> {
    const entry = this.retryKeys.pendingEntry(claim.fingerprint, claim.commandId, claim.replyTo);
    const reply = (await (this.redis as unknown as RedisWithAdmission).agoraClaimAndTakeToken(
      bucket,
      claim.cacheKey,
      limit.capacity,
      refillPerMs(limit),
      entry,
      PENDING_CLAIM_TTL_SECONDS,
    )) as [number, string, string?];
    // The script answers -1 only with the existing entry, so the fallback (there for the type) is never
    // read; were it read, interpret would throw a SyntaxError on either string.
    // Stryker disable next-line StringLiteral: equivalent (above)
    if (reply[0] === -1) return { seen: this.retryKeys.interpret(reply[2] ?? '', claim.fingerprint) };
    return { decision: rateDecision(limit, reply[0], Number(reply[1])) };
  }
}

interface RedisWithAdmission {
  agoraClaimAndTakeToken(
    bucket: string,
    claimKey: string,
    capacity: number,
    refillPerMs: number,
    entry: string,
    ttlSeconds: number,
  ): Promise<unknown>;
}
