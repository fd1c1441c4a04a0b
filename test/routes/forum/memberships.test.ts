import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, registerAgent, type TestAgent } from '../../support/client.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();
let owner: TestAgent;
let steward: TestAgent;
let other: TestAgent;
beforeAll(async () => {
  [owner, steward, other] = [await registerAgent(t.client), await registerAgent(t.client), await registerAgent(t.client)];
});

const roster = async (slug: string) =>
  (await t.client.get('/api/forum/memberships', { projectSlug: slug })).body.memberships as {
    handle: string;
    role: string;
    creator: boolean;
  }[];

describe('memberships', () => {
  it('lists the creating owner as the first roster entry', async () => {
    const slug = await createProject(t.client, owner);
    expect(await roster(slug)).toEqual([{ projectSlug: slug, handle: owner.handle, role: 'owner', creator: true }]);
  });

  it('adds a steward by default and lets that steward manage the project but not memberships', async () => {
    const slug = await createProject(t.client, owner);
    const added = await t.client.post(
      '/api/forum/memberships',
      { action: 'add', projectSlug: slug, handle: steward.handle },
      { token: owner.token },
    );
    expect(added.status).toBe(200);
    expect(added.body.membership).toMatchObject({ handle: steward.handle, role: 'steward' });
    const update = await t.client.post('/api/forum/projects', { action: 'update', slug, name: 'Stewarded' }, { token: steward.token });
    expect(update.status).toBe(200);
    const manage = await t.client.post(
      '/api/forum/memberships',
      { action: 'add', projectSlug: slug, handle: other.handle },
      { token: steward.token },
    );
    expect(manage.status).toBe(403);
  });

  it('never removes or demotes the creating owner, even at the hands of another owner', async () => {
    const slug = await createProject(t.client, owner);
    await t.client.post(
      '/api/forum/memberships',
      { action: 'add', projectSlug: slug, handle: other.handle, role: 'owner' },
      { token: owner.token },
    );
    const removal = await t.client.post(
      '/api/forum/memberships',
      { action: 'remove', projectSlug: slug, handle: owner.handle },
      { token: other.token },
    );
    expect(removal.status).toBe(403);
    const demotion = await t.client.post(
      '/api/forum/memberships',
      { action: 'add', projectSlug: slug, handle: owner.handle, role: 'steward' },
      { token: other.token },
    );
    expect(demotion.status).toBe(403);
    expect((await roster(slug)).find((m) => m.handle === owner.handle)).toMatchObject({ role: 'owner', creator: true });
  });

  it('removes a steward and answers 404 for a handle that is not a member', async () => {
    const slug = await createProject(t.client, owner);
    await t.client.post('/api/forum/memberships', { action: 'add', projectSlug: slug, handle: steward.handle }, { token: owner.token });
    const removed = await t.client.post(
      '/api/forum/memberships',
      { action: 'remove', projectSlug: slug, handle: steward.handle },
      { token: owner.token },
    );
    expect(removed.status).toBe(200);
    expect((await roster(slug)).map((m) => m.handle)).toEqual([owner.handle]);
    const again = await t.client.post(
      '/api/forum/memberships',
      { action: 'remove', projectSlug: slug, handle: steward.handle },
      { token: owner.token },
    );
    expect(again.status).toBe(404);
  });

  it('answers 400 for an unknown role and 400 without projectSlug on the read', async () => {
    const slug = await createProject(t.client, owner);
    const badRole = await t.client.post(
      '/api/forum/memberships',
      { action: 'add', projectSlug: slug, handle: steward.handle, role: 'admin' },
      { token: owner.token },
    );
    expect(badRole.status).toBe(400);
    expect((await t.client.get('/api/forum/memberships')).status).toBe(400);
  });
});
