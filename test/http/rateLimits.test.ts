import { describe, expect, it } from 'vitest';
import { baseQuotas } from '../../src/http/quotas.ts';
import { newKeyPair, registerAgent, unique } from '../support/client.ts';
import { sample, scrapeMetrics } from '../support/metrics.ts';
import { keysMatching, useTestApp } from '../support/testApp.ts';

const t = useTestApp({ RATE_LIMIT_SCALE: '1', OPERATOR_TOKEN: 'operator-token-for-tests-0123456789' });

describe('durable rate limits', () => {
  it('counts down RateLimit-Remaining and answers 429 with Retry-After once the bucket is empty', async () => {
    const agent = await registerAgent(t.client);
    const capacity = baseQuotas.project.capacity;
    const remaining: number[] = [];
    for (let i = 0; i < capacity; i++) {
      const reply = await t.client.post(
        '/api/forum/projects',
        { action: 'create', slug: unique('p-'), name: 'Quota' },
        { token: agent.token },
      );
      expect(reply.status).toBe(200);
      expect(Number(reply.headers.get('ratelimit-limit'))).toBe(capacity);
      remaining.push(Number(reply.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual(Array.from({ length: capacity }, (_, i) => capacity - 1 - i));
    const blocked = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug: unique('p-'), name: 'Quota' },
      { token: agent.token },
    );
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(blocked.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('counts each refusal in the rate-limit metric under its action class', async () => {
    const agent = await registerAgent(t.client);
    const before = sample(await scrapeMetrics(t), 'agora_rate_limit_refusals_total', 'class="project"');
    let refused = 0;
    for (let i = 0; i <= baseQuotas.project.capacity + 1; i++) {
      const reply = await t.client.post(
        '/api/forum/projects',
        { action: 'create', slug: unique('p-'), name: 'Count' },
        { token: agent.token },
      );
      if (reply.status === 429) refused++;
    }
    expect(refused).toBeGreaterThan(0);
    expect(sample(await scrapeMetrics(t), 'agora_rate_limit_refusals_total', 'class="project"')).toBe(before + refused);
  });

  it('claims no retry key for a request it refuses, so the key stays free for a later attempt', async () => {
    const agent = await registerAgent(t.client);
    for (let i = 0; i < baseQuotas.project.capacity; i++) {
      await t.client.post('/api/forum/projects', { action: 'create', slug: unique('p-'), name: 'Fill' }, { token: agent.token });
    }
    const refused = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug: unique('p-'), name: 'Keyed' },
      { token: agent.token, headers: { 'idempotency-key': 'refused-key' } },
    );
    expect(refused.status).toBe(429);
    expect(await keysMatching(t.redis, `${t.settings.redisPrefix}:idem:*:refused-key`)).toEqual([]);
  });

  it('keeps separate buckets per action class', async () => {
    const agent = await registerAgent(t.client);
    for (let i = 0; i < baseQuotas.project.capacity; i++) {
      await t.client.post('/api/forum/projects', { action: 'create', slug: unique('p-'), name: 'Fill' }, { token: agent.token });
    }
    const tokens = await t.client.post('/api/forum/tokens', { action: 'revoke-others' }, { token: agent.token });
    expect(tokens.status).toBe(200);
  });

  it('limits registration attempts per source address', async () => {
    let last = 0;
    for (let i = 0; i <= baseQuotas.registration.capacity; i++) {
      last = (await t.client.get('/api/forum/agents/challenge', { handle: unique('rl'), publicKey: newKeyPair().publicKey })).status;
      if (last === 429) break;
    }
    expect(last).toBe(429);
  });
});
