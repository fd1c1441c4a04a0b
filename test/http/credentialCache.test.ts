import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Client, createProject, registerAgent, type TestAgent } from '../support/client.ts';
import { rotateKey } from '../support/signedActions.ts';
import { TcpProxy, targetOf } from '../support/tcpProxy.ts';
import { startServiceProcess, type ServiceProcess } from '../support/serviceProcess.ts';
import { until } from '../support/until.ts';
import { keysMatching, useTestApp } from '../support/testApp.ts';

// Instance A: the test app (API and workers). Instance B: a second API process on the same Redis and Postgres,
// reaching Postgres through a proxy the tests can close.
const a = useTestApp();
const bPostgres = new TcpProxy(targetOf(inject('databaseUrl'), 5432));
let b: Client;
let child: ServiceProcess;

beforeAll(async () => {
  await bPostgres.open();
  child = await startServiceProcess('src/bin/main.ts', ['api'], {
    REDIS_PREFIX: a.settings.redisPrefix,
    DATABASE_URL: bPostgres.url(inject('databaseUrl')),
  });
  b = child.client;
  await until(async () => (await b.get('/readyz')).status === 200, 30_000, 'the second API instance to be ready');
});
afterAll(async () => {
  child.child.kill('SIGKILL');
  await bPostgres.close();
});

/** Another token for the agent (registering again with its key), so one can be revoked while the other acts. */
async function secondToken(agent: TestAgent): Promise<{ token: string; tokenId: string }> {
  const again = await registerAgent(a.client, agent.handle, agent.keys);
  return { token: again.token, tokenId: again.tokenId };
}

const me = (client: Client, token: string) => client.get('/api/forum/agents/me', {}, { token });

describe('cached token lookups across API instances', () => {
  it('serves a token from the cache without Postgres once it has been looked up', async () => {
    const agent = await registerAgent(a.client);
    // Uncompressed, so the ETag is the service's own (hapi suffixes -gzip to a compressed one) and its 304 needs no query.
    const plain = { 'accept-encoding': 'identity' };
    const looked = await b.get('/api/forum/agents/me', {}, { token: agent.token, headers: plain });
    expect(looked.status).toBe(200);
    // B cannot reach Postgres now: a token it had to look up again would be 503, not a 304 to this agent.
    await bPostgres.close();
    try {
      const cached = await b.get(
        '/api/forum/agents/me',
        {},
        { token: agent.token, headers: { ...plain, 'if-none-match': looked.headers.get('etag') ?? '' } },
      );
      expect(cached.status).toBe(304);
      const unknown = await me(b, 'agora_never-issued-token');
      expect({ status: unknown.status, code: unknown.body.error.code }).toEqual({ status: 503, code: 'service_unavailable' });
    } finally {
      await bPostgres.open();
    }
  });

  it('answers a conditional read carrying the gzip form of its ETag from Redis, without Postgres', async () => {
    const owner = await registerAgent(a.client);
    for (let i = 0; i < 8; i++) await createProject(a.client, owner);
    const gzip = { 'accept-encoding': 'gzip' };
    const listed = await b.get('/api/forum/projects', { view: 'full', limit: '20' }, { headers: gzip });
    expect(listed.status).toBe(200);
    const etag = listed.headers.get('etag') ?? '';
    expect(etag).toMatch(/-gzip"$/);
    // The listing is a Postgres query: only the Redis fingerprints can answer 304 now.
    await bPostgres.close();
    try {
      const again = await b.get('/api/forum/projects', { view: 'full', limit: '20' }, { headers: { ...gzip, 'if-none-match': etag } });
      expect(again.status).toBe(304);
    } finally {
      await bPostgres.open();
    }
  });

  it('answers agents/me in full, not only 304, from the cached token and the rendered body while Postgres is unreachable', async () => {
    const agent = await registerAgent(a.client);
    const first = await me(b, agent.token);
    expect(first.status).toBe(200);
    await bPostgres.close();
    try {
      const again = await me(b, agent.token);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
    } finally {
      await bPostgres.open();
    }
  });

  it('refuses a revoked token on the very next request on another instance', async () => {
    const agent = await registerAgent(a.client);
    const other = await secondToken(agent);
    expect((await me(b, other.token)).status).toBe(200);
    const revoked = await a.client.post('/api/forum/tokens', { action: 'revoke', tokenId: other.tokenId }, { token: agent.token });
    expect(revoked.status).toBe(200);
    const next = await me(b, other.token);
    expect(next.status).toBe(401);
    expect(next.body.error.code).toBe('invalid_token');
    expect((await me(b, agent.token)).status).toBe(200);
  });

  it('refuses every other token on every instance right after revoke-others', async () => {
    const agent = await registerAgent(a.client);
    const others = [await secondToken(agent), await secondToken(agent)];
    for (const other of others) expect((await me(b, other.token)).status).toBe(200);
    expect((await b.post('/api/forum/tokens', { action: 'revoke-others' }, { token: agent.token })).status).toBe(200);
    for (const other of others) {
      expect((await me(a.client, other.token)).status).toBe(401);
      expect((await me(b, other.token)).status).toBe(401);
    }
    expect((await me(b, agent.token)).status).toBe(200);
  });

  it('answers a read with a remembered token whose cache entry expired, after looking the token up again', async () => {
    const agent = await registerAgent(a.client);
    expect((await me(b, agent.token)).status).toBe(200);
    for (const key of await keysMatching(a.redis, `${a.settings.redisPrefix}:credential:*`)) await a.redis.del(key);
    const again = await me(b, agent.token);
    expect(again.status).toBe(200);
    expect(again.body.agent.handle).toBe(agent.handle);
  });

  it('answers 401 before judging the parameters of a read whose remembered token was revoked', async () => {
    const agent = await registerAgent(a.client);
    const other = await secondToken(agent);
    expect((await b.get('/api/forum/posts', { limit: '5' }, { token: other.token })).status).toBe(200);
    expect((await a.client.post('/api/forum/tokens', { action: 'revoke', tokenId: other.tokenId }, { token: agent.token })).status).toBe(
      200,
    );
    const refused = await b.get('/api/forum/posts', { limit: 'many' }, { token: other.token });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_token');
  });

  it('refuses the old tokens on another instance right after a key rotation that revokes them', async () => {
    const agent = await registerAgent(a.client);
    expect((await me(b, agent.token)).status).toBe(200);
    await rotateKey(a.client, agent, { revokeTokens: 'true' });
    expect((await me(b, agent.token)).status).toBe(401);
  });
});
