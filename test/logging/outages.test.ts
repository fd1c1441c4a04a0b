import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inject } from 'vitest';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { TcpProxy, targetOf } from '../support/tcpProxy.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const written: string[] = [];
const postgres = new TcpProxy(targetOf(inject('databaseUrl'), 5432));
const redis = new TcpProxy(targetOf(inject('redisUrl'), 6379));
let t: TestApp;
let agent: TestAgent;
const unhandled = vi.spyOn(console, 'error');

beforeAll(async () => {
  await postgres.open();
  await redis.open();
  t = await startTestApp(
    { DATABASE_URL: postgres.url(inject('databaseUrl')), REDIS_URL: redis.url(inject('redisUrl')), LOG_LEVEL: 'info' },
    undefined,
    {
      logDestination: { write: (line: string) => void written.push(line) },
    },
  );
  agent = await registerAgent(t.client);
});
afterAll(async () => {
  unhandled.mockRestore();
  await postgres.open();
  await redis.open();
  await t.stop();
  await postgres.close();
  await redis.close();
});

/** "At once": far below COMMAND_TIMEOUT_MS (10 s by default) and the seconds a Redis reconnection takes, and still lenient on a loaded machine. */
const FAIL_FAST_MS = 2500;

const outageLines = (message: string) =>
  written.map((line) => JSON.parse(line) as { msg: string; dependency?: string }).filter((line) => line.msg === message);

async function eventually(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `retryAfter`: 2 s for Postgres, whose failover takes 10 s or more; 1 s for Redis, mostly back by the time a request hears of it. */
function expectUnavailable(
  reply: { status: number; headers: Headers; body: { ok: boolean; error?: { code: string } } },
  retryAfter: '1' | '2',
) {
  expect(reply.status).toBe(503);
  expect(reply.body).toMatchObject({ ok: false, error: { code: 'service_unavailable' } });
  expect(reply.headers.get('retry-after')).toBe(retryAfter);
}

describe('dependency outages', () => {
  it('answers 503 with Retry-After, never 500, while Postgres is unreachable, and logs the outage once', async () => {
    // Ready before the outage: the instance has seen its migrations applied.
    expect((await t.client.get('/readyz')).status).toBe(200);
    await postgres.close();
    try {
      for (let i = 0; i < 5; i++) expectUnavailable(await t.client.get('/api/forum/agents/me', {}, { token: agent.token }), '2');
      expectUnavailable(
        await t.client.post('/api/forum/projects', { action: 'create', slug: unique('p-'), name: 'Down' }, { token: agent.token }),
        '2',
      );
      const ready = await t.client.get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.checks).toMatchObject({ postgres: false, redis: true });
      // The balancer's check leaves the shared Postgres out, so an outage of it takes no instance out of rotation.
      const balancerCheck = await t.client.get('/readyz?exclude=postgres');
      expect(balancerCheck.status).toBe(200);
      expect(balancerCheck.body.checks).toEqual({ redis: true, migrations: true });
    } finally {
      await postgres.open();
    }
    await eventually(() => outageLines('postgres recovered').length === 1);
    expect(outageLines('postgres unavailable')).toHaveLength(1);
    expect((await t.client.get('/api/forum/agents/me', {}, { token: agent.token })).status).toBe(200);
  });

  it('answers 503 at once while Redis is unreachable, logs one line down and one up, and recovers', async () => {
    await redis.close();
    try {
      // The first write after the cut, before the outage is even logged: refused in well under the command
      // timeout (10 s), which is what a request waiting for Redis to come back would take.
      const sent = performance.now();
      const first = await t.client.post(
        '/api/forum/projects',
        { action: 'create', slug: unique('p-'), name: 'Down' },
        { token: agent.token },
      );
      expect(performance.now() - sent).toBeLessThan(FAIL_FAST_MS);
      expectUnavailable(first, '1');
      await eventually(() => outageLines('redis unavailable').length === 1);
      const ready = await t.client.get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.checks).toMatchObject({ postgres: true, redis: false });
      // Several reconnection attempts happen meanwhile; none of them adds a line.
      await new Promise((resolve) => setTimeout(resolve, 1500));
    } finally {
      await redis.open();
    }
    await eventually(() => outageLines('redis recovered').length === 1);
    expect(outageLines('redis unavailable')).toHaveLength(1);
    await eventually(
      async () =>
        (await t.client.post('/api/forum/projects', { action: 'create', slug: unique('p-'), name: 'Back' }, { token: agent.token }))
          .status === 200,
    );
    expect(unhandled.mock.calls.filter((call) => String(call[0]).includes('Unhandled error event'))).toEqual([]);
  });
});
