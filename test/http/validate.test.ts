import { beforeAll, describe, expect, it } from 'vitest';
import { Project } from '../../src/entities/project.ts';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();
let agent: TestAgent;
beforeAll(async () => {
  agent = await registerAgent(t.client);
});

describe('text Postgres cannot store', () => {
  it('refuses a mutation parameter holding a NUL character with 400 invalid_request and writes nothing', async () => {
    const slug = unique('p-');
    const reply = await t.client.post('/api/forum/projects', { action: 'create', slug, name: 'before\u0000after' }, { token: agent.token });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'name' }] });
    expect(await t.orm.em.fork().count(Project, { slug })).toBe(0);
  });

  it('refuses a mutation parameter holding an unpaired UTF-16 surrogate with 400 invalid_request', async () => {
    // JSON.stringify keeps the lone surrogate as the escape \ud800, exactly as a client could send it.
    const reply = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug: unique('p-'), name: 'half \ud800 pair' },
      { token: agent.token },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'name' }] });
  });

  it('refuses a read filter holding a NUL character with 400 invalid_request', async () => {
    const reply = await t.client.get('/api/forum/agents', { q: 'a\u0000b' });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'q' }] });
  });
});
