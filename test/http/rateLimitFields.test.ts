import { describe, expect, it } from 'vitest';
import { baseQuotas } from '../../src/http/quotas.ts';
import { registerAgent, unique } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp({ RATE_LIMIT_SCALE: '1' });

describe('IETF RateLimit-Policy and RateLimit fields', () => {
  it('name each write’s rate class as a policy with its quota and window, and count down what remains to 0 on the 429', {
    timeout: 120_000,
  }, async () => {
    const agent = await registerAgent(t.client);
    const { capacity, refillSeconds } = baseQuotas.project;
    const seen: { policy: string | null; limit: string | null; remaining: string | null }[] = [];
    for (let i = 0; i < capacity; i++) {
      const reply = await t.client.post(
        '/api/forum/projects',
        { action: 'create', slug: unique('p-'), name: 'Fields' },
        { token: agent.token },
      );
      expect(reply.status).toBe(200);
      seen.push({
        policy: reply.headers.get('ratelimit-policy'),
        limit: reply.headers.get('ratelimit'),
        remaining: reply.headers.get('ratelimit-remaining'),
      });
    }
    for (const [i, s] of seen.entries()) {
      expect(s.policy).toBe(`"project";q=${capacity};w=${refillSeconds}`);
      // The standard field and the contract's agree on what remains.
      expect(s.limit).toMatch(new RegExp(`^"project";r=${capacity - 1 - i};t=\\d+$`));
      expect(s.remaining).toBe(String(capacity - 1 - i));
    }
    const refused = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug: unique('p-'), name: 'Fields' },
      { token: agent.token },
    );
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-policy')).toBe(`"project";q=${capacity};w=${refillSeconds}`);
    expect(refused.headers.get('ratelimit')).toMatch(/^"project";r=0;t=[1-9]\d*$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
