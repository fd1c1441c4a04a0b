import { beforeAll, describe, expect, it } from 'vitest';
import { OutboxEvent } from '../../src/entities/outboxEvent.ts';
import { Project } from '../../src/entities/project.ts';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();
let agent: TestAgent;
beforeAll(async () => {
  agent = await registerAgent(t.client);
});

const create = (slug: string, key: string, token = agent.token, name = 'Keyed') =>
  t.client.post('/api/forum/projects', { action: 'create', slug, name }, { token, headers: { 'idempotency-key': key } });

describe('retry keys', () => {
  it('replays the first response for the same key and parameters, applying once', async () => {
    const slug = unique('p-');
    const key = unique('k');
    const first = await create(slug, key);
    const second = await create(slug, key);
    expect(second.status).toBe(first.status);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    expect(await t.orm.em.fork().count(Project, { slug })).toBe(1);
    expect(await t.orm.em.fork().count(OutboxEvent, { projectSlug: slug })).toBe(1);
  });

  it('replays a refusal too: the same key keeps answering the first 409', async () => {
    const slug = unique('p-');
    await create(slug, unique('k'));
    const key = unique('k');
    const first = await create(slug, key);
    expect(first.status).toBe(409);
    const again = await create(slug, key);
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
  });

  it('answers 409 idempotency_key_reused for the same key with other parameters', async () => {
    const key = unique('k');
    await create(unique('p-'), key);
    const reused = await create(unique('p-'), key);
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
  });

  it('uses request_id as the retry key of a GET mutation', async () => {
    const slug = unique('p-');
    const request_id = unique('r');
    const fields = { action: 'create', slug, name: 'GET keyed', request_id, access_token: agent.token };
    const first = await t.client.get('/api/forum/projects', fields);
    const second = await t.client.get('/api/forum/projects', fields);
    expect(first.status).toBe(200);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(await t.orm.em.fork().count(Project, { slug })).toBe(1);
  });

  it('scopes keys to the agent: another agent with the same key gets its own result', async () => {
    const other = await registerAgent(t.client);
    const key = unique('k');
    const mine = await create(unique('p-'), key);
    const theirs = await create(unique('p-'), key, other.token);
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotency-replayed')).toBeNull();
  });

  it('applies concurrent retries of one key exactly once', async () => {
    const slug = unique('p-');
    const key = unique('k');
    const replies = await Promise.all(Array.from({ length: 12 }, () => create(slug, key)));
    const ok = replies.filter((r) => r.status === 200);
    const inProgress = replies.filter((r) => r.status === 409 && r.body.error.code === 'idempotency_in_progress');
    expect(ok.length + inProgress.length).toBe(12);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const reply of ok) expect(reply.body.project.id).toBe(ok[0]?.body.project.id);
    expect(await t.orm.em.fork().count(Project, { slug })).toBe(1);
    const settled = await create(slug, key);
    expect(settled.status).toBe(200);
    expect(settled.body.project.id).toBe(ok[0]?.body.project.id);
  });

  it('consumes no rate-limit budget on a replay', async () => {
    const fresh = await registerAgent(t.client);
    const key = unique('k');
    const first = await create(unique('p-'), key, fresh.token);
    const remaining = Number(first.headers.get('ratelimit-remaining'));
    const replay = await t.client.post('/api/forum/projects', { action: 'create', slug: first.body.project.slug, name: 'Keyed' }, { token: fresh.token, headers: { 'idempotency-key': key } });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    const next = await create(unique('p-'), unique('k'), fresh.token);
    expect(Number(next.headers.get('ratelimit-remaining'))).toBe(remaining - 1);
  });

  it('refuses a retry key longer than 255 characters with 400', async () => {
    const reply = await create(unique('p-'), 'k'.repeat(256));
    expect(reply.status).toBe(400);
  });
});
