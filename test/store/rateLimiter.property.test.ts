import { randomInt, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type BucketLimit, type RateDecision, RateLimiter, rateDecision } from '../../src/store/rateLimiter.ts';

/**
 * The token bucket's Lua (src/store/rateLimiter.ts), which the mutation run
 * cannot mutate, run on the real Redis against a reference token bucket
 * written here: random quotas, random arrivals, every decision compared.
 *
 * The clock: the script reads Redis's (TIME) and stores the millisecond it
 * read as the bucket's `ts`; the test cannot set that clock. So (1) it reads
 * that `ts` back after each arrival, checks that it lies between Redis TIMEs
 * read just before and after, and gives the reference the same instant; and
 * (2) it makes time pass between arrivals by moving the stored `ts` back by
 * the gap, which the script cannot tell from the gap having passed: hours
 * of arrivals in milliseconds. The reference sees arrival times only (the
 * Redis clock plus the gaps so far), not how the test made them.
 *
 * The reference computes in doubles in the script's order, and writes its
 * tokens as Lua does (below), so decisions are compared exactly; how a reply
 * becomes a decision (`rateDecision`) is pinned in rateLimiter.test.ts.
 * A failure names its seed: `RATE_LIMIT_SEED=<seed>` replays it.
 */
const SEED = Number(process.env.RATE_LIMIT_SEED ?? randomInt(2 ** 31));
const SEQUENCES = 40;
const ARRIVALS = 40;

/** Redis 7 runs Lua 5.1, whose tostring writes a number as "%.14g": 14 significant digits, read back as the nearest double. */
const luaNumber = (value: number): number => Number(value.toPrecision(14));

interface Bucket {
  tokens: number;
  at: number;
}

/** A token bucket: `capacity` tokens, refilled evenly over `refillSeconds`, one taken per allowed arrival. */
function referenceTake(limit: BucketLimit, bucket: Bucket | null, at: number): { allowed: boolean; tokens: number; expiresInMs: number } {
  const perMs = limit.capacity / (limit.refillSeconds * 1000);
  const start = bucket ?? { tokens: limit.capacity, at };
  const available = Math.min(limit.capacity, start.tokens + (at - start.at) * perMs);
  const allowed = available >= 1;
  const left = allowed ? available - 1 : available;
  // Forgotten a second after it would be full again: gone earlier, it would come back full too soon.
  return { allowed, tokens: luaNumber(left), expiresInMs: Math.ceil((limit.capacity - left) / perMs) + 1000 };
}

/** mulberry32: a small seeded PRNG, so a failing run replays exactly with its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What the store did at one arrival, and what Redis held and read around it. */
interface Observed {
  limit: BucketLimit;
  sequence: number;
  arrival: number;
  decision: RateDecision;
  /** Redis TIME in ms just before and just after the arrival (and the reads below). */
  before: number;
  after: number;
  storedAt: number;
  storedTokens: number;
  pttl: number;
  /** The arrival's time on the reference's clock: the stored instant plus every gap so far. */
  at: number;
}

const redis = new Redis(inject('redisUrl'), { lazyConnect: true });
const limiter = new RateLimiter(redis);
const prefix = `rl-property-${randomUUID()}`;
const observed: Observed[] = [];

async function redisMs(): Promise<number> {
  const [seconds, micros] = (await redis.time()).map(Number) as [number, number];
  return seconds * 1000 + Math.floor(micros / 1000);
}

/** A gap between arrivals: often none (a burst), else below one token's time, a few tokens' time, or past a full refill. */
function gapMs(random: () => number, limit: BucketLimit): number {
  const perToken = (limit.refillSeconds * 1000) / limit.capacity;
  const kind = random();
  if (kind < 0.5) return 0;
  if (kind < 0.75) return Math.floor(random() * perToken);
  if (kind < 0.92) return Math.floor(random() * 3 * perToken);
  return Math.floor(random() * 1.5 * limit.refillSeconds * 1000);
}

beforeAll(async () => {
  await redis.connect();
  const random = prng(SEED);
  for (let sequence = 0; sequence < SEQUENCES; sequence++) {
    // Capacities from 1 to 120, mostly small (so that bursts empty them), refilled over 1 s to 2 h.
    const limit = { capacity: 1 + Math.floor(random() ** 2 * 120), refillSeconds: 1 + Math.floor(random() * 7200) };
    const key = `${prefix}:${sequence}`;
    let skew = 0;
    for (let arrival = 0; arrival < ARRIVALS; arrival++) {
      const gap = arrival === 0 ? 0 : gapMs(random, limit);
      skew += gap;
      const before = await redisMs();
      if (gap > 0) await redis.hincrby(key, 'ts', -gap);
      const decision = await limiter.take(key, limit);
      const [tokens, at] = (await redis.hmget(key, 'tokens', 'ts')).map(Number) as [number, number];
      const pttl = await redis.pttl(key);
      const after = await redisMs();
      observed.push({ limit, sequence, arrival, decision, before, after, storedAt: at, storedTokens: tokens, pttl, at: at + skew });
    }
  }
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

/** Each arrival with the reference's answer, the reference fed the same arrival times in order. */
function withReference(): { seen: Observed; expected: ReturnType<typeof referenceTake>; where: string }[] {
  let bucket: Bucket | null = null;
  return observed.map((seen) => {
    if (seen.arrival === 0) bucket = null;
    const expected = referenceTake(seen.limit, bucket, seen.at);
    bucket = { tokens: expected.tokens, at: seen.at };
    const where = `seed ${SEED}, sequence ${seen.sequence} (${seen.limit.capacity} per ${seen.limit.refillSeconds} s), arrival ${seen.arrival}`;
    return { seen, expected, where };
  });
}

describe('the token bucket script against a reference token bucket', () => {
  it('decides every arrival as the reference does: allowed, tokens left, seconds to retry and to full', () => {
    expect(observed).toHaveLength(SEQUENCES * ARRIVALS);
    for (const { seen, expected, where } of withReference()) {
      expect(seen.decision, where).toEqual(rateDecision(seen.limit, expected.allowed ? 1 : 0, expected.tokens));
      expect(seen.storedTokens, where).toBe(expected.tokens);
    }
  });

  it('refuses some arrivals and allows others, so both branches are compared', () => {
    // Refusals vary with the seed (32 to 520 of 1,600 over 20,000 seeds of this generator); 16 of each is enough to compare.
    const allowed = observed.filter((seen) => seen.decision.allowed).length;
    expect(allowed).toBeGreaterThanOrEqual(observed.length / 100);
    expect(observed.length - allowed).toBeGreaterThanOrEqual(observed.length / 100);
  });

  it('reads its clock from Redis, in whole milliseconds', () => {
    for (const { seen, where } of withReference()) {
      expect(Number.isInteger(seen.storedAt), where).toBe(true);
      expect(seen.storedAt, where).toBeGreaterThanOrEqual(seen.before);
      expect(seen.storedAt, where).toBeLessThanOrEqual(seen.after);
    }
  });

  it('forgets a bucket a second after it would be full again, and not before', () => {
    for (const { seen, expected, where } of withReference()) {
      // PTTL counts from when it runs, at most `after - storedAt` ms after the script's clock; and Redis 7.2+ dates
      // a script's PEXPIRE from the script's start, before its TIME: up to 100 ms before on a busy machine.
      expect(seen.pttl, where).toBeLessThanOrEqual(expected.expiresInMs);
      expect(seen.pttl, where).toBeGreaterThanOrEqual(expected.expiresInMs - (seen.after - seen.storedAt) - 100);
    }
  });
});
