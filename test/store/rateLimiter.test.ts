import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RateLimiter, type BucketLimit } from '../../src/store/rateLimiter.ts';

/**
 * The TypeScript half of the limiter: which script runs with which keys and
 * arguments, and how its reply becomes a rate decision. The Lua scripts
 * themselves run against a real Redis in test/http/rateLimits.test.ts.
 * Like ioredis, this stand-in splits a defined command's arguments into
 * KEYS and ARGV by the command's numberOfKeys.
 */
function scriptedRedis(reply: unknown[]) {
  const calls: { command: string; keys: unknown[]; argv: unknown[] }[] = [];
  const redis: Record<string, unknown> = {
    defineCommand(name: string, definition: { numberOfKeys: number; lua: string }) {
      redis[name] = async (...args: unknown[]) => {
        calls.push({ command: name, keys: args.slice(0, definition.numberOfKeys), argv: args.slice(definition.numberOfKeys) });
        return reply;
      };
    },
  };
  return { limiter: new RateLimiter(redis as unknown as Redis), calls };
}

/** Ten tokens a minute: one token every 6 seconds, 1/6000 of a token per millisecond. */
const limit: BucketLimit = { capacity: 10, refillSeconds: 60 };

describe('rate limiter', () => {
  it('runs the bucket script on the bucket key with the capacity and the refill per millisecond', async () => {
    const { limiter, calls } = scriptedRedis([1, '9']);
    await limiter.take('rl:agent:1', limit);
    expect(calls).toEqual([{ command: 'agoraTakeToken', keys: ['rl:agent:1'], argv: [10, 10 / 60_000] }]);
  });

  it('allows a request that got a token and reports the whole tokens left', async () => {
    const { limiter } = scriptedRedis([1, '6.5']);
    const decision = await limiter.take('k', limit);
    expect(decision).toMatchObject({ allowed: true, limit: 10, remaining: 6 });
  });

  it('reports the seconds until the bucket is full again, rounded up', async () => {
    const { limiter } = scriptedRedis([1, '6.5']);
    // 3.5 tokens missing at one per 6 s: 21 s.
    expect((await limiter.take('k', limit)).resetSeconds).toBe(21);
  });

  it('refuses a request that got no token and says when the next one comes, rounded up', async () => {
    const { limiter } = scriptedRedis([0, '0.25']);
    // 0.75 of a token missing: 4.5 s, so 5; 9.75 tokens to full: 58.5 s, so 59.
    expect(await limiter.take('k', limit)).toEqual({ allowed: false, limit: 10, remaining: 0, resetSeconds: 59, retryAfterSeconds: 5 });
  });

  it('never tells a client to retry in less than a second', async () => {
    const { limiter } = scriptedRedis([1, '9.5']);
    expect((await limiter.take('k', limit)).retryAfterSeconds).toBe(1);
  });

  it('claims a retry key with the same bucket in one script, the claim key second', async () => {
    const { limiter, calls } = scriptedRedis([1, '9']);
    await limiter.claimAndTake('rl:agent:1', limit, 'idem:agent:1:key', '{"state":"pending"}', 600);
    expect(calls).toEqual([
      { command: 'agoraClaimAndTakeToken', keys: ['rl:agent:1', 'idem:agent:1:key'], argv: [10, 10 / 60_000, '{"state":"pending"}', 600] },
    ]);
  });

  it('answers the entry of a retry key seen before, without a rate decision', async () => {
    const { limiter } = scriptedRedis([-1, '0', '{"state":"done"}']);
    expect(await limiter.claimAndTake('k', limit, 'claim', 'entry', 600)).toEqual({ existing: '{"state":"done"}' });
  });

  it('answers an empty entry when the script returns none for a key seen before', async () => {
    const { limiter } = scriptedRedis([-1, '0']);
    expect(await limiter.claimAndTake('k', limit, 'claim', 'entry', 600)).toEqual({ existing: '' });
  });

  it('answers the rate decision for a new retry key', async () => {
    const { limiter } = scriptedRedis([0, '0.25']);
    expect(await limiter.claimAndTake('k', limit, 'claim', 'entry', 600)).toEqual({
      decision: { allowed: false, limit: 10, remaining: 0, resetSeconds: 59, retryAfterSeconds: 5 },
    });
  });
});
