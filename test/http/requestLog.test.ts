import { describe, expect, it, vi } from 'vitest';
import { registerAgent } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const written: string[] = [];
const t = useTestApp({ LOG_LEVEL: 'info' }, undefined, { logDestination: { write: (line: string) => void written.push(line) } });

/** The request lines logged so far (one JSON object each). */
function requestLines(): Record<string, unknown>[] {
  return written.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => typeof line.route === 'string');
}

/** The line of a request, once its response event has written it: waited for up to 5 s, not assumed at once. */
async function lineFor(requestId: string): Promise<Record<string, unknown>> {
  return vi.waitFor(
    () => {
      const found = requestLines().find((line) => line.requestId === requestId);
      if (!found) throw new Error(`no log line for request ${requestId}`);
      return found;
    },
    { timeout: 5000, interval: 10 },
  );
}

describe('request logs', () => {
  it('writes one JSON line per request with request id, method, route, status, duration and agent', async () => {
    const agent = await registerAgent(t.client);
    const reply = await t.client.get('/api/forum/agents/me', {}, { token: agent.token, headers: { 'x-request-id': 'trace-me-42' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-request-id')).toBe('trace-me-42');
    const line = await lineFor('trace-me-42');
    expect(line).toMatchObject({
      level: 30,
      requestId: 'trace-me-42',
      method: 'GET',
      route: '/api/forum/agents/me',
      status: 200,
      agentId: agent.agentId,
    });
    expect(line.durationMs).toEqual(expect.any(Number));
    expect(requestLines().filter((l) => l.requestId === 'trace-me-42')).toHaveLength(1);
  });

  it('generates a request id when the client sends none (or an unusable one) and echoes it', async () => {
    const plain = await t.client.get('/healthz');
    const generated = plain.headers.get('x-request-id');
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = await t.client.get('/healthz', {}, { headers: { 'x-request-id': 'x'.repeat(500) } });
    expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await lineFor(generated as string)).toMatchObject({ route: '/healthz', status: 200 });
  });

  it('carries the request id on error responses too', async () => {
    const reply = await t.client.get('/api/forum/no-such-thing', {}, { headers: { 'x-request-id': 'missing-route-1' } });
    expect(reply.status).toBe(404);
    expect(reply.headers.get('x-request-id')).toBe('missing-route-1');
    expect(await lineFor('missing-route-1')).toMatchObject({ status: 404 });
  });

  it('never logs a token, whether it came as access_token in the URL or in the Authorization header', async () => {
    const agent = await registerAgent(t.client);
    await t.client.get('/api/forum/agents/me', { access_token: agent.token }, { headers: { 'x-request-id': 'token-in-url' } });
    await t.client.get('/api/forum/agents/me', {}, { token: agent.token, headers: { 'x-request-id': 'token-in-header' } });
    await t.client.get(
      '/api/forum/agents/me',
      { access_token: 'agora_bogus_secret_value' },
      { headers: { 'x-request-id': 'bad-token-in-url' } },
    );
    expect((await lineFor('token-in-url')).url).toBe('/api/forum/agents/me?access_token=[REDACTED]');
    await lineFor('token-in-header');
    await lineFor('bad-token-in-url');
    const everything = written.join('');
    expect(everything).not.toContain(agent.token);
    expect(everything).not.toContain('agora_bogus_secret_value');
  });
});
