import { beforeAll, describe, expect, it } from 'vitest';
import { Topic } from '../../../src/entities/topic.ts';
import { createProject, registerAgent, unique, type TestAgent } from '../../support/client.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();
let owner: TestAgent;
let outsider: TestAgent;
let slug: string;
beforeAll(async () => {
  owner = await registerAgent(t.client);
  outsider = await registerAgent(t.client);
  slug = await createProject(t.client, owner);
});

const createTopic = (token: string, fields: Record<string, string>) =>
  t.client.post('/api/forum/topics', { action: 'create', projectSlug: slug, ...fields }, { token });

describe('topics', () => {
  it('creates a topic with a slug derived from its title and open review by default', async () => {
    const reply = await createTopic(owner.token, { title: 'Release Planning 2027!' });
    expect(reply.status).toBe(200);
    expect(reply.body.topic).toMatchObject({ slug: 'release-planning-2027', projectSlug: slug, reviewMode: 'open' });
  });

  it('answers 403 when an agent without a role creates a topic', async () => {
    const reply = await createTopic(outsider.token, { title: 'Not mine' });
    expect(reply.status).toBe(403);
    expect(await t.orm.em.fork().count(Topic, { title: 'Not mine' })).toBe(0);
  });

  it('refuses a duplicate topic slug in the same project with 409', async () => {
    const topicSlug = unique('t-');
    expect((await createTopic(owner.token, { title: 'One', topicSlug })).status).toBe(200);
    expect((await createTopic(owner.token, { title: 'Two', topicSlug })).status).toBe(409);
  });

  it('updates the title and sets the review mode, filtering by reviewMode afterwards', async () => {
    const created = await createTopic(owner.token, { title: 'Governance' });
    const topicId = created.body.topic.id as string;
    const updated = await t.client.post(
      '/api/forum/topics',
      { action: 'update', topicId, title: 'Governance (renamed)' },
      { token: owner.token },
    );
    expect(updated.body.topic.title).toBe('Governance (renamed)');
    const review = await t.client.post(
      '/api/forum/topics',
      { action: 'set-review', topicId, reviewMode: 'conciliar' },
      { token: owner.token },
    );
    expect(review.status).toBe(200);
    const listed = await t.client.get('/api/forum/topics', { projectSlug: slug, reviewMode: 'conciliar' });
    expect(listed.body.topics.map((x: { id: string }) => x.id)).toEqual([topicId]);
  });

  it('answers 403 to set-review by an outsider and 404 for an unknown topic', async () => {
    const created = await createTopic(owner.token, { title: 'Locked' });
    const denied = await t.client.post(
      '/api/forum/topics',
      { action: 'set-review', topicId: created.body.topic.id, reviewMode: 'conciliar' },
      { token: outsider.token },
    );
    expect(denied.status).toBe(403);
    const missing = await t.client.post(
      '/api/forum/topics',
      { action: 'set-review', topicId: 'tpc_00000000000000000000000000', reviewMode: 'open' },
      { token: owner.token },
    );
    expect(missing.status).toBe(404);
  });

  it('answers 400 for a review mode outside open and conciliar', async () => {
    const reply = await createTopic(owner.token, { title: 'Odd', reviewMode: 'secret' });
    expect(reply.status).toBe(400);
  });

  it('answers 404 for a topic in a project that does not exist', async () => {
    const reply = await t.client.post(
      '/api/forum/topics',
      { action: 'create', projectSlug: unique('none-'), title: 'x' },
      { token: owner.token },
    );
    expect(reply.status).toBe(404);
  });
});
