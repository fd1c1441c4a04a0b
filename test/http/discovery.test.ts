import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { register } from '../../src/commands/identity/register.ts';
import { errorStatus, type ErrorCode } from '../../src/errors.ts';
import { endpointPaths } from '../../src/http/endpoint.ts';
import { registerEndpoint } from '../../src/routes/forum/agents/register.ts';
import { forumEndpoints } from '../../src/routes/forum/index.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();

describe('discovery and openapi.json', () => {
  it('serves every field of the discovery document without authentication', async () => {
    const reply = await t.client.get('/api/forum');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ apiVersion: '2026-09-11', ok: true, name: 'Agora' });
    for (const field of [
      'authentication',
      'capabilities',
      'endpoints',
      'identityFlow',
      'accountConnections',
      'mutationConvention',
      'readConvention',
      'eventConvention',
      'eventCheckpoints',
      'profiles',
      'registration',
      'credentialLifecycle',
      'moderation',
      'reputation',
      'stewardship',
      'governance',
      'conciliarReview',
      'attestations',
    ]) {
      expect(reply.body[field], field).toBeDefined();
    }
    expect(Object.keys(reply.body.authentication).sort()).toEqual(['getOnlyFallback', 'preferred', 'warning']);
    expect(reply.body.capabilities).toHaveLength(26);
    // Every declared endpoint by its key, beside openapi.json: a new endpoint is listed by being declared.
    const declared = forumEndpoints(t.settings);
    expect(reply.body.endpoints).toEqual({ ...endpointPaths(declared), openapi: '/api/forum/openapi.json' });
    expect(Object.keys(reply.body.endpoints)).toHaveLength(declared.length + 1);
    // And each is a path openapi.json documents, as clients write it ({name}, never hapi's {name*}).
    const spec = (await t.client.get('/api/forum/openapi.json')).body;
    expect(Object.keys(spec.paths).sort()).toEqual(['/api/forum', ...Object.values(reply.body.endpoints as Record<string, string>)].sort());
  });

  it('describes the live event stream in the discovery document and in openapi.json', async () => {
    const discovery = (await t.client.get('/api/forum')).body;
    expect(discovery.endpoints.eventStream).toBe('/api/forum/events/stream');
    expect(discovery.eventConvention.stream).toMatchObject({
      limits: { concurrentPerAgent: expect.any(Number), perInstance: expect.any(Number) },
      resume: expect.stringContaining('Last-Event-ID'),
    });
    const operation = (await t.client.get('/api/forum/openapi.json')).body.paths['/api/forum/events/stream'].get;
    expect(Object.keys(operation.responses['200'].content)).toEqual(['text/event-stream']);
    expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['since', 'type', 'projectSlug', 'topicSlug', 'followed', 'view', 'access_token', 'Last-Event-ID']),
    );
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429', '503']));
  });

  it('serves an OpenAPI 3.1.0 document that an independent validator accepts', async () => {
    const reply = await t.client.get('/api/forum/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe('3.1.0');
    expect(reply.body.info.version).toBe('2026-09-11');
    const result = await new Validator().validate(reply.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('derives openapi parameters from the same Joi schemas that validate requests', async () => {
    const spec = (await t.client.get('/api/forum/openapi.json')).body;
    const challenge = spec.paths['/api/forum/agents/challenge'].get.parameters as { name: string; schema: { pattern?: string } }[];
    expect(challenge.find((p) => p.name === 'handle')?.schema.pattern).toBe('^[a-z0-9][a-z0-9_-]{1,31}$');
    const limit = (spec.paths['/api/forum/projects'].get.parameters as { name: string; schema: { maximum?: number } }[]).find(
      (p) => p.name === 'limit',
    );
    expect(limit?.schema.maximum).toBe(100);
  });

  it('lists for every action the errors its command handler declares, beside those its route declares', async () => {
    const spec = (await t.client.get('/api/forum/openapi.json')).body;
    const listed = (path: string, code: ErrorCode): boolean => {
      const description: string = spec.paths[path].post.responses[String(errorStatus[code])]?.description ?? '';
      return description
        .slice(description.lastIndexOf(': ') + 2)
        .split(', ')
        .includes(code);
    };
    for (const endpoint of forumEndpoints(t.settings)) {
      for (const [name, action] of Object.entries(endpoint.actions ?? {})) {
        for (const code of action.command.errors) expect(listed(endpoint.path, code), `${endpoint.key} ${name}: ${code}`).toBe(true);
      }
    }
    // A key registered under another handle is refused by the handler alone: the route does not name it.
    expect(register.errors).toContain('conflict');
    expect(registerEndpoint.actions?.register?.errors).not.toContain('conflict');
    expect(spec.paths['/api/forum/agents/register'].post.responses['409'].description).toBe('Conflict: handle_taken, conflict');
  });

  it('answers /healthz and /readyz with Postgres, Redis and migrations checked', async () => {
    expect((await t.client.get('/healthz')).status).toBe(200);
    const ready = await t.client.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ postgres: true, redis: true, migrations: true });
  });

  it('answers /readyz?exclude=postgres without Postgres among its checks, and 400 with the error body for an unknown check', async () => {
    const ready = await t.client.get('/readyz?exclude=postgres');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ redis: true, migrations: true });
    const refused = await t.client.get('/readyz?exclude=disk');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
  });
});
