import type { Redis } from 'ioredis';

/** Refills KEYS[1] by the time elapsed, takes one token if it can; leaves `allowed` and `tokens` set. */
const takeTokenLua = `
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

const tokenBucketScript = `${takeTokenLua}
return { allowed, tostring(tokens) }
`;

/**
 * A mutation with a retry key, in one round trip: a key seen before answers
 * its entry (no token taken: replays are free); otherwise a token is taken
 * and, only if one was, the key is claimed with ARGV[3] for ARGV[4] seconds.
 */
const claimAndTakeScript = `
local existing = redis.call('GET', KEYS[2])
if existing then return { -1, '0', existing } end
${takeTokenLua}
if allowed == 1 then redis.call('SET', KEYS[2], ARGV[3], 'EX', tonumber(ARGV[4])) end
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
  private readonly redis: Redis;

  constructor(redis: Redis) {
    this.redis = redis;
    redis.defineCommand('agoraTakeToken', { numberOfKeys: 1, lua: tokenBucketScript });
    redis.defineCommand('agoraClaimAndTakeToken', { numberOfKeys: 2, lua: claimAndTakeScript });
  }

  async take(key: string, limit: BucketLimit): Promise<RateDecision> {
    const refillPerMs = limit.capacity / (limit.refillSeconds * 1000);
    const [allowed, tokensText] = (await (this.redis as unknown as RedisWithBucket).agoraTakeToken(key, limit.capacity, refillPerMs)) as [number, string];
    return decision(limit, allowed, Number(tokensText));
  }

  /**
   * Claims a retry key and takes a token together. `existing`: the key's
   * entry, nothing taken or claimed; otherwise the rate decision, with the key
   * claimed (as `entry`, for `ttlSeconds`) only when a token was taken.
   */
  async claimAndTake(key: string, limit: BucketLimit, claimKey: string, entry: string, ttlSeconds: number): Promise<{ existing: string } | { decision: RateDecision }> {
    const refillPerMs = limit.capacity / (limit.refillSeconds * 1000);
    const reply = (await (this.redis as unknown as RedisWithBucket).agoraClaimAndTakeToken(key, claimKey, limit.capacity, refillPerMs, entry, ttlSeconds)) as [number, string, string?];
    if (reply[0] === -1) return { existing: reply[2] ?? '' };
    return { decision: decision(limit, reply[0], Number(reply[1])) };
  }
}

function decision(limit: BucketLimit, allowed: number, tokens: number): RateDecision {
  const refillPerMs = limit.capacity / (limit.refillSeconds * 1000);
  return {
    allowed: allowed === 1,
    limit: limit.capacity,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((limit.capacity - tokens) / refillPerMs / 1000),
    retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / refillPerMs / 1000)),
  };
}

interface RedisWithBucket {
  agoraTakeToken(key: string, capacity: number, refillPerMs: number): Promise<unknown>;
  agoraClaimAndTakeToken(key: string, claimKey: string, capacity: number, refillPerMs: number, entry: string, ttlSeconds: number): Promise<unknown>;
}
