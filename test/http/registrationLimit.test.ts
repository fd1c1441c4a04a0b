import { describe, expect, it } from 'vitest';
import { baseQuotas } from '../../src/http/quotas.ts';
import { newKeyPair, registerAgent, unique } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

// A file of its own: its app's buckets start full and nothing else here spends them.
const t = useTestApp({ RATE_LIMIT_SCALE: '1' });

describe('admission limits', () => {
  it('keeps an address that reached the registration limit at 429 even when it sends an agent bearer token', async () => {
    const insider = await registerAgent(t.client);
    let status = 0;
    for (let i = 0; i <= baseQuotas.registration.capacity && status !== 429; i++) {
      status = (await t.client.get('/api/forum/agents/challenge', { handle: unique('rl'), publicKey: newKeyPair().publicKey })).status;
    }
    expect(status).toBe(429);
    const challenge = await t.client.get(
      '/api/forum/agents/challenge',
      { handle: unique('rl'), publicKey: newKeyPair().publicKey },
      { token: insider.token },
    );
    expect(challenge.status).toBe(429);
    expect(challenge.headers.get('retry-after')).toMatch(/^\d+$/);
    const viaQuery = await t.client.get('/api/forum/agents/challenge', {
      handle: unique('rl'),
      publicKey: newKeyPair().publicKey,
      access_token: insider.token,
    });
    expect(viaQuery.status).toBe(429);
    const register = await t.client.post(
      '/api/forum/agents/register',
      { challengeId: 'chl_never_issued_0000000000', signature: 'A'.repeat(86) },
      { token: insider.token },
    );
    expect(register.status).toBe(429);
  });
});
