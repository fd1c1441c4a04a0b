import type { RedisClient } from '../redis.ts';

/**
 * Refills KEYS[1] by the time elapsed, takes one token if it can; leaves
 * `allowed` and `tokens` set. A fragment: the admission script
 * (admission.ts) runs it too. ARGV[1] capacity, ARGV[2] refill per ms.
 */
export const TAKE_TOKEN_LUA = `
local capacity = tonumber(ARGV[1])
local refillPerMs = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or capacity
local ts = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + (now - ts) * refillPerMs)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / refillPerMs) + 1000)
`;

const tokenBucketScript = `${TAKE_TOKEN_LUA}
return { allowed, tostring(tokens) }
`;

export interface BucketLimit {
  capacity: number;
  refillSeconds: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one token is available (meaningful when refused). */
  retryAfterSeconds: number;
}

/**
 * Durable token buckets in Redis. The script refills by elapsed time read
 * from the Redis clock (one clock for every API instance), takes one token
 * if it can, and expires an idle bucket once it would be full again.
 */
export class RateLimiter {
  private readonly redis: RedisClient;

  constructor(redis: RedisClient) {
    this.redis = redis;
    redis.defineCommand('agoraTakeToken', { numberOfKeys: 1, lua: tokenBucketScript });
  }

  async take(key: string, limit: BucketLimit): Promise<RateDecision> {
    const [allowed, tokensText] = (await (this.redis as unknown as RedisWithBucket).agoraTakeToken(
      key,
      limit.capacity,
      refillPerMs(limit),
    )) as [number, string];
    return rateDecision(limit, allowed, Number(tokensText));
  }
}

/** Tokens a bucket regains per millisecond (the scripts' ARGV[2]). */
export function refillPerMs(limit: BucketLimit): number {
  return limit.capacity / (limit.refillSeconds * 1000);
}

/** What a script's reply (allowed, tokens left) means to the client. */
export function rateDecision(limit: BucketLimit, allowed: number, tokens: number): RateDecision {
  // Not through refillPerMs: dividing by that rounded rate lifts some whole seconds just above themselves (3600.0000000000005).
  const secondsFor = (missing: number) => Math.ceil((missing * limit.refillSeconds) / limit.capacity);
  return {
    allowed: allowed === 1,
    limit: limit.capacity,
    remaining: Math.floor(tokens),
    resetSeconds: secondsFor(limit.capacity - tokens),
    retryAfterSeconds: Math.max(1, secondsFor(1 - tokens)),
  };
}

interface RedisWithBucket {
  agoraTakeToken(key: string, capacity: number, refillPerMs: number): Promise<unknown>;
}
