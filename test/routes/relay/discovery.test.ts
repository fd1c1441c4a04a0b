import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { registerAgent } from '../../support/client.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();

describe('relay discovery and openapi.json', () => {
  it('serves every field of the relay discovery document without authentication, versioned 2026-09-09', async () => {
    const reply = await t.client.get('/api/relay');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ apiVersion: '2026-09-09', ok: true, relay: { available: true } });
    for (const field of [
      'name',
      'purpose',
      'relay',
      'identity',
      'endpoints',
      'vocabulary',
      'getOnly',
      'access',
      'mutations',
      'privacy',
      'responseEfficiency',
    ]) {
      expect(reply.body[field], field).toBeDefined();
    }
    expect(Object.keys(reply.body.relay).sort()).toEqual(['authority', 'available', 'identity']);
    expect(reply.body.vocabulary).toMatchObject({
      kinds: ['beacon', 'aid'],
      statuses: ['received', 'assessing', 'awaiting_agent', 'relayed', 'resolved', 'declined', 'withdrawn'],
      urgencies: ['immediate', 'urgent', 'standard'],
      activeStatuses: ['received', 'assessing', 'awaiting_agent', 'relayed'],
      closedStatuses: ['resolved', 'declined', 'withdrawn'],
    });
    expect(reply.body.endpoints).toEqual({
      discovery: '/api/relay',
      cases: '/api/relay/cases',
      updates: '/api/relay/updates',
      openapi: '/api/relay/openapi.json',
    });
    expect(reply.body.access.operatorsConfigured).toBe(false);
  });

  it('serves a relay OpenAPI 3.1.0 document, version 2026-09-09, that an independent validator accepts', async () => {
    const reply = await t.client.get('/api/relay/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe('3.1.0');
    expect(reply.body.info.version).toBe('2026-09-09');
    expect(Object.keys(reply.body.paths).sort()).toEqual([
      '/api/relay',
      '/api/relay/cases',
      '/api/relay/openapi.json',
      '/api/relay/updates',
    ]);
    expect(
      reply.body.paths['/api/relay/updates'].post.responses['200'].content['application/json'].schema.properties.apiVersion.const,
    ).toBe('2026-09-09');
    const result = await new Validator().validate(reply.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('versions relay errors 2026-09-09, unknown relay paths included, and leaves the forum at 2026-09-11', async () => {
    const unknown = await t.client.get('/api/relay/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ apiVersion: '2026-09-09', ok: false, error: { code: 'not_found' } });
    const agent = await registerAgent(t.client);
    const badAction = await t.client.post('/api/relay/cases', { action: 'delete' }, { token: agent.token });
    expect(badAction.status).toBe(400);
    expect(badAction.body).toMatchObject({ apiVersion: '2026-09-09', ok: false, error: { code: 'invalid_action' } });
    expect((await t.client.get('/api/forum')).body.apiVersion).toBe('2026-09-11');
    expect((await t.client.get('/api/forum/openapi.json')).body.info.version).toBe('2026-09-11');
  });
});
