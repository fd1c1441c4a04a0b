import { describe, expect, it } from 'vitest';
import { AdmissionStore } from '../../src/store/admission.ts';
import { IdempotencyStore, PENDING_CLAIM_TTL_SECONDS } from '../../src/store/idempotencyStore.ts';
import { RateLimiter, type BucketLimit } from '../../src/store/rateLimiter.ts';
import { scriptedRedis } from '../support/scriptedRedis.ts';

/**
 * The TypeScript half of admission: the script's keys and arguments, and how
 * its reply becomes a claim or a rate decision. The script itself runs
 * against a real Redis in test/http/retryKeys.test.ts and rateLimits.test.ts.
 */
function scripted(reply: unknown[]) {
  const { redis, calls } = scriptedRedis(reply);
  const retryKeys = new IdempotencyStore(redis);
  return { admission: new AdmissionStore(redis, new RateLimiter(redis), retryKeys), retryKeys, calls };
}

const limit: BucketLimit = { capacity: 10, refillSeconds: 60 };
const claim = { cacheKey: 'idem:agent:1:key', fingerprint: 'fp1', commandId: 'cmd1', replyTo: 'replies:api-1' };

describe('admission', () => {
  it('claims a retry key with its pending entry and takes a token from the bucket in one script, the claim key second', async () => {
    const { admission, calls } = scripted([1, '9']);
    await admission.claimAndTake('rl:agent:1', limit, claim);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ command: 'agoraClaimAndTakeToken', keys: ['rl:agent:1', 'idem:agent:1:key'] });
    const [capacity, refill, entry, ttl] = calls[0]?.argv ?? [];
    expect([capacity, refill, ttl]).toEqual([10, 10 / 60_000, PENDING_CLAIM_TTL_SECONDS]);
    expect(JSON.parse(entry as string)).toMatchObject({
      state: 'pending',
      fingerprint: 'fp1',
      commandId: 'cmd1',
      replyTo: 'replies:api-1',
    });
  });

  it('answers what the entry of a retry key seen before means to this request, with no rate decision', async () => {
    const result = { status: 200, body: { ok: true } };
    const { admission } = scripted([-1, '0', JSON.stringify({ state: 'done', fingerprint: 'fp1', commandId: 'cmd1', result })]);
    expect(await admission.claimAndTake('k', limit, claim)).toEqual({ seen: { kind: 'replay', result } });
  });

  it('answers a reuse when the key seen before was used with other parameters', async () => {
    const { admission } = scripted([
      -1,
      '0',
      JSON.stringify({ state: 'done', fingerprint: 'fp2', commandId: 'cmd1', result: { status: 200, body: {} } }),
    ]);
    expect(await admission.claimAndTake('k', limit, claim)).toEqual({ seen: { kind: 'reused' } });
  });

  it('answers the rate decision for a new retry key', async () => {
    const { admission } = scripted([0, '0.25']);
    expect(await admission.claimAndTake('k', limit, claim)).toEqual({
      decision: { allowed: false, limit: 10, remaining: 0, resetSeconds: 59, retryAfterSeconds: 5 },
    });
  });

  it('takes a token without touching any retry key for a request that has none', async () => {
    const { admission, calls } = scripted([1, '9']);
    expect(await admission.take('rl:agent:1', limit)).toMatchObject({ allowed: true, remaining: 9 });
    expect(calls).toEqual([{ command: 'agoraTakeToken', keys: ['rl:agent:1'], argv: [10, 10 / 60_000] }]);
  });
});
