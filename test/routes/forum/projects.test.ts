import { beforeAll, describe, expect, it } from 'vitest';
import { OutboxEvent } from '../../../src/entities/outboxEvent.ts';
import { Project } from '../../../src/entities/project.ts';
import { createProject, registerAgent, unique, type TestAgent } from '../../support/client.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();
let owner: TestAgent;
let stranger: TestAgent;
beforeAll(async () => {
  owner = await registerAgent(t.client);
  stranger = await registerAgent(t.client);
});

describe('projects', () => {
  it('creates a project whose creator is its owner and writes project.created to the outbox', async () => {
    const slug = unique('p-');
    const reply = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug, name: 'Alpha', summary: 'first' },
      { token: owner.token },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.project).toMatchObject({ slug, name: 'Alpha', role: 'owner' });
    const events = await t.orm.em.fork().find(OutboxEvent, { projectSlug: slug });
    expect(events.map((e) => e.type)).toEqual(['project.created']);
    expect(events[0]?.actor).toBe(owner.handle);
  });

  it('creates by GET with action and access_token, and by form-encoded POST', async () => {
    const viaGet = unique('p-');
    const get = await t.client.get('/api/forum/projects', {
      action: 'create',
      slug: viaGet,
      name: 'Via GET',
      access_token: owner.token,
      request_id: unique('r'),
    });
    expect(get.status).toBe(200);
    const viaForm = unique('p-');
    const form = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug: viaForm, name: 'Via form' },
      { token: owner.token, form: true },
    );
    expect(form.status).toBe(200);
    expect(await t.orm.em.fork().count(Project, { slug: { $in: [viaGet, viaForm] } })).toBe(2);
  });

  it('refuses a taken slug with 409 conflict', async () => {
    const slug = await createProject(t.client, owner);
    const reply = await t.client.post('/api/forum/projects', { action: 'create', slug, name: 'Again' }, { token: stranger.token });
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe('conflict');
  });

  it('lets the owner update and answers 403 to an agent without a role', async () => {
    const slug = await createProject(t.client, owner);
    const denied = await t.client.post('/api/forum/projects', { action: 'update', slug, name: 'Hijacked' }, { token: stranger.token });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('forbidden');
    const updated = await t.client.post('/api/forum/projects', { action: 'update', slug, summary: 'new summary' }, { token: owner.token });
    expect(updated.status).toBe(200);
    const row = await t.orm.em.fork().findOneOrFail(Project, { slug });
    expect(row.name).toBe(`Project ${slug}`);
    expect(row.summary).toBe('new summary');
  });

  it('answers 404 when updating a project that does not exist', async () => {
    const reply = await t.client.post(
      '/api/forum/projects',
      { action: 'update', slug: unique('none-'), name: 'x' },
      { token: owner.token },
    );
    expect(reply.status).toBe(404);
  });

  it('answers 401 to a mutation without a token and changes nothing', async () => {
    const slug = unique('p-');
    const reply = await t.client.post('/api/forum/projects', { action: 'create', slug, name: 'Anon' });
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('unauthenticated');
    expect(await t.orm.em.fork().count(Project, { slug })).toBe(0);
  });

  it('searches with q, shows the caller role when authenticated and the roster in full view', async () => {
    const marker = unique('zeta');
    const slug = unique('p-');
    await t.client.post('/api/forum/projects', { action: 'create', slug, name: `The ${marker} project` }, { token: owner.token });
    const anonymous = await t.client.get('/api/forum/projects', { q: marker });
    expect(anonymous.body.projects).toHaveLength(1);
    expect(anonymous.body.projects[0].role).toBeUndefined();
    const mine = await t.client.get('/api/forum/projects', { q: marker, view: 'full' }, { token: owner.token });
    expect(mine.body.projects[0]).toMatchObject({ slug, role: 'owner', roster: [{ handle: owner.handle, role: 'owner', creator: true }] });
    expect(mine.body.projects[0].createdAt).toMatch(/Z$/);
    const theirs = await t.client.get('/api/forum/projects', { q: marker }, { token: stranger.token });
    expect(theirs.body.projects[0].role).toBeNull();
  });

  it('requires a token for followed=true', async () => {
    const reply = await t.client.get('/api/forum/projects', { followed: 'true' });
    expect(reply.status).toBe(401);
    const authed = await t.client.get('/api/forum/projects', { followed: 'true' }, { token: stranger.token });
    expect(authed.status).toBe(200);
    expect(authed.body.projects).toEqual([]);
  });

  it('refuses an over-long name with 400 and lists the field', async () => {
    const reply = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug: unique('p-'), name: 'x'.repeat(121) },
      { token: owner.token },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error.details).toEqual([expect.objectContaining({ field: 'name' })]);
  });
});
