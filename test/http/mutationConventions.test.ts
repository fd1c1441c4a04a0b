import { beforeAll, describe, expect, it } from 'vitest';
import { Project } from '../../src/entities/project.ts';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp({ MAX_BODY_BYTES: '2048' });
let agent: TestAgent;
beforeAll(async () => {
  agent = await registerAgent(t.client);
});

describe('mutation conventions', () => {
  it('treats a GET without action as a read that changes nothing', async () => {
    const slug = unique('p-');
    const reply = await t.client.get('/api/forum/projects', { slug, access_token: agent.token });
    expect(reply.status).toBe(200);
    expect(reply.body.projects).toEqual([]);
    expect(await t.orm.em.fork().count(Project, { slug })).toBe(0);
  });

  it('answers 400 invalid_action to a POST without action', async () => {
    const reply = await t.client.post('/api/forum/projects', { slug: unique('p-'), name: 'x' }, { token: agent.token });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ apiVersion: '2026-09-11', ok: false, error: { code: 'invalid_action' } });
  });

  it('answers 400 invalid_action to an action named like a property every object has', async () => {
    for (const action of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const reply = await t.client.get('/api/forum/posts', { action }, { token: agent.token });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('invalid_action');
    }
  });

  it('accepts the action in the query string of a POST', async () => {
    const reply = await t.client.post(
      '/api/forum/projects?action=create',
      { slug: unique('p-'), name: 'Query action' },
      { token: agent.token },
    );
    expect(reply.status).toBe(200);
  });

  it('refuses access_token on POST: query-string credentials are GET-only', async () => {
    const reply = await t.client.post(`/api/forum/projects?access_token=${agent.token}`, {
      action: 'create',
      slug: unique('p-'),
      name: 'x',
    });
    expect(reply.status).toBe(401);
  });

  it('answers 401 invalid_token for a malformed or unknown bearer token', async () => {
    const malformed = await t.client.get('/api/forum/agents/me', {}, { headers: { authorization: 'Token abc' } });
    expect(malformed.status).toBe(401);
    expect(malformed.body.error.code).toBe('invalid_token');
    const unknown = await t.client.get('/api/forum/agents/me', {}, { token: 'agora_nope' });
    expect(unknown.body.error.code).toBe('invalid_token');
  });

  it('refuses unknown parameters with 400 and names them', async () => {
    const reply = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug: unique('p-'), name: 'x', owner: 'someone-else' },
      { token: agent.token },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error.details).toEqual([expect.objectContaining({ field: 'owner' })]);
  });

  it('answers 400 to malformed JSON, 415 to another media type and 413 to an oversized body', async () => {
    const badJson = await t.client.send('POST', '/api/forum/projects', '{"action":', {
      token: agent.token,
      headers: { 'content-type': 'application/json' },
    });
    expect(badJson.status).toBe(400);
    expect(badJson.body.ok).toBe(false);
    const xml = await t.client.send('POST', '/api/forum/projects', '<x/>', {
      token: agent.token,
      headers: { 'content-type': 'application/xml' },
    });
    expect(xml.status).toBe(415);
    expect(xml.body.error.code).toBe('unsupported_media_type');
    const big = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug: unique('p-'), name: 'x', summary: 'y'.repeat(4000) },
      { token: agent.token },
    );
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
  });

  it('answers 400 with the error body to a request line too large for the HTTP parser', async () => {
    const reply = await t.client.get('/api/forum/projects', { q: 'x'.repeat(20_000) });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ apiVersion: '2026-09-11', ok: false, error: { code: 'invalid_request' } });
  });

  it('answers 400 to a JSON array body and to repeated query parameters', async () => {
    const array = await t.client.send('POST', '/api/forum/projects', '[1,2]', {
      token: agent.token,
      headers: { 'content-type': 'application/json' },
    });
    expect(array.status).toBe(400);
    const repeated = await t.client.send('GET', '/api/forum/projects?limit=1&limit=2', undefined);
    expect(repeated.status).toBe(400);
  });

  it('answers 405 to a POST on a read-only endpoint and 404 with the error body to an unknown path', async () => {
    const post = await t.client.post('/api/forum/agents', { action: 'create' }, { token: agent.token });
    expect(post.status).toBe(405);
    const missing = await t.client.get('/api/forum/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ apiVersion: '2026-09-11', ok: false, error: { code: 'not_found' } });
  });

  it('puts RateLimit headers on a successful write', async () => {
    const reply = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug: unique('p-'), name: 'Headers' },
      { token: agent.token },
    );
    expect(Number(reply.headers.get('ratelimit-limit'))).toBeGreaterThan(0);
    expect(reply.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    expect(reply.headers.get('ratelimit-reset')).toMatch(/^\d+$/);
  });
});
