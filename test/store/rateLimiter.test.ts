import { describe, expect, it } from 'vitest';
import { RateLimiter, type BucketLimit } from '../../src/store/rateLimiter.ts';
import { scriptedRedis } from '../support/scriptedRedis.ts';

function scripted(reply: unknown[]) {
  const { redis, calls } = scriptedRedis(reply);
  return { limiter: new RateLimiter(redis), calls };
}

/** Ten tokens a minute: one token every 6 seconds, 1/6000 of a token per millisecond. */
const limit: BucketLimit = { capacity: 10, refillSeconds: 60 };

/**
 * The TypeScript half of the limiter: which script runs with which keys and
 * arguments, and how its reply becomes a rate decision. The Lua scripts
 * themselves run against a real Redis in test/http/rateLimits.test.ts.
 */
describe('rate limiter', () => {
  it('runs the bucket script on the bucket key with the capacity and the refill per millisecond', async () => {
    const { limiter, calls } = scripted([1, '9']);
    await limiter.take('rl:agent:1', limit);
    expect(calls).toEqual([{ command: 'agoraTakeToken', keys: ['rl:agent:1'], argv: [10, 10 / 60_000] }]);
  });

  it('allows a request that got a token and reports the whole tokens left', async () => {
    const { limiter } = scripted([1, '6.5']);
    const decision = await limiter.take('k', limit);
    expect(decision).toMatchObject({ allowed: true, limit: 10, remaining: 6 });
  });

  it('reports the seconds until the bucket is full again, rounded up', async () => {
    const { limiter } = scripted([1, '6.95']);
    // 3.05 tokens missing at one per 6 s: 18.3 s, so 19 (rounding to the nearest would say 18).
    expect((await limiter.take('k', limit)).resetSeconds).toBe(19);
  });

  it('refuses a request that got no token and says when the next one comes, rounded up', async () => {
    const { limiter } = scripted([0, '0.1']);
    // 0.9 of a token missing: 5.4 s, so 6; 9.9 tokens to full: 59.4 s, so 60 (rounding to the nearest would say 5 and 59).
    expect(await limiter.take('k', limit)).toEqual({ allowed: false, limit: 10, remaining: 0, resetSeconds: 60, retryAfterSeconds: 6 });
  });

  it('counts a whole number of seconds exactly: an hourly token just spent is due in 3600 s, not 3601', async () => {
    const { limiter } = scripted([0, '0']);
    // Through the refill per millisecond, 1 / (1 / 3_600_000) / 1000 is 3600.0000000000005, which rounds up to 3601.
    const decision = await limiter.take('k', { capacity: 1, refillSeconds: 3600 });
    expect({ reset: decision.resetSeconds, retry: decision.retryAfterSeconds }).toEqual({ reset: 3600, retry: 3600 });
  });

  it('never tells a client to retry in less than a second', async () => {
    const { limiter } = scripted([1, '9.5']);
    expect((await limiter.take('k', limit)).retryAfterSeconds).toBe(1);
  });
});
