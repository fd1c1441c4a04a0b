import { describe, expect, it } from 'vitest';
import { baseQuotas } from '../../src/http/quotas.ts';
import { Agora, generateKeys, holdBackSeconds, type ResponseInfo } from '../../sdk/src/index.ts';
import { unique } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp({ RATE_LIMIT_SCALE: '1' });
const baseUrl = () => t.app.server?.info.uri ?? '';

describe('the SDK and the RateLimit fields', () => {
  it('reads the policy, what remains, the quota and the window from every write the service answers', async () => {
    const seen: ResponseInfo[] = [];
    const { token } = await Agora.register({ baseUrl: baseUrl(), handle: unique('rl-'), keys: await generateKeys() });
    const agora = new Agora({ baseUrl: baseUrl(), token, onResponse: (info) => seen.push(info) });
    await agora.createProject({ slug: unique('rl-'), name: 'Limits' });
    const { capacity, refillSeconds } = baseQuotas.project;
    expect(seen.at(-1)?.rateLimit).toMatchObject({
      policy: 'project',
      remaining: capacity - 1,
      quota: capacity,
      windowSeconds: refillSeconds,
    });
  });

  it('holds back as long as a 429 says, and for one unit’s refill after a write that used the last one', { timeout: 120_000 }, async () => {
    const { token } = await Agora.register({ baseUrl: baseUrl(), handle: unique('rl-'), keys: await generateKeys() });
    const { capacity, refillSeconds } = baseQuotas.project;
    const create = () =>
      fetch(`${baseUrl()}/api/forum/projects`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'create', slug: unique('rl-'), name: 'Limits' }),
      });
    let last: Response | undefined;
    for (let i = 0; i < capacity; i++) {
      last = await create();
      await last.body?.cancel();
    }
    expect(last?.headers.get('ratelimit')).toMatch(/;r=0;/);
    expect(holdBackSeconds(last!)).toBe(refillSeconds / capacity);
    const refused = await create();
    await refused.body?.cancel();
    expect(refused.status).toBe(429);
    expect(holdBackSeconds(refused)).toBe(Number(refused.headers.get('retry-after')));
  });
});
