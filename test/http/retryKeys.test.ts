import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OutboxEvent } from '../../src/entities/outboxEvent.ts';
import { Project } from '../../src/entities/project.ts';
import { redisKeys } from '../../src/redis.ts';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { createPost, newTopic } from '../support/forum.ts';
import { TcpProxy, targetOf } from '../support/tcpProxy.ts';
import { startTestApp, useTestApp, type TestApp } from '../support/testApp.ts';

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

  it('counts the view as a parameter: the worker answers in it, and the same key with another view is another request', async () => {
    const slug = unique('p-');
    const key = unique('k');
    const full = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug, name: 'Viewed', view: 'full' },
      { token: agent.token, headers: { 'idempotency-key': key } },
    );
    expect(full.status).toBe(200);
    expect(full.body.project).toMatchObject({ slug, summary: '', roster: [{ handle: agent.handle, role: 'owner', creator: true }] });
    const compact = await t.client.post(
      '/api/forum/projects',
      { action: 'create', slug, name: 'Viewed' },
      { token: agent.token, headers: { 'idempotency-key': key } },
    );
    expect(compact.status).toBe(409);
    expect(compact.body.error.code).toBe('idempotency_key_reused');
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
    const bucket = redisKeys(t.settings.redisPrefix).rateBucket(fresh.agentId, 'project');
    const key = unique('k');
    const first = await create(unique('p-'), key, fresh.token);
    expect(first.status).toBe(200);
    // The bucket as the first write left it: its tokens and the Redis time it was last taken from.
    const before = await t.redis.hgetall(bucket);
    expect(Object.keys(before).sort()).toEqual(['tokens', 'ts']);
    const replay = await create(first.body.project.slug, key, fresh.token);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    // Refill is computed from elapsed time when a token is next taken, so an untouched bucket is the proof: nothing was taken.
    expect(await t.redis.hgetall(bucket)).toEqual(before);
    const next = await create(unique('p-'), unique('k'), fresh.token);
    expect(next.headers.get('idempotency-replayed')).toBeNull();
    expect(await t.redis.hgetall(bucket)).not.toEqual(before);
  });

  it('keeps a retry key 24 hours after its result is stored', async () => {
    const key = unique('k');
    const first = await create(unique('p-'), key);
    expect(first.status).toBe(200);
    const entry = redisKeys(t.settings.redisPrefix).idempotency(agent.agentId, key);
    expect(JSON.parse((await t.redis.get(entry)) ?? '{}')).toMatchObject({ state: 'done', result: { status: 200 } });
    // What Redis holds, read right after the write: 24 h less the moments since, never more.
    const ttl = await t.redis.pttl(entry);
    expect(ttl).toBeLessThanOrEqual(24 * 3600 * 1000);
    expect(ttl).toBeGreaterThan(24 * 3600 * 1000 - 60_000);
  });

  it('frees the retry key of a command that failed on every attempt, so the same key applies it once the fault is gone', async () => {
    const slug = unique('p-');
    const key = unique('k');
    // A fault only this command meets, on every attempt, while Postgres stays up: a trigger refusing this one slug.
    const fault = `fail_${slug.replace(/-/g, '_')}`;
    const db = t.orm.em.fork();
    await db.execute(
      `create function "${fault}"() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`,
    );
    await db.execute(
      `create trigger "${fault}" before insert on project for each row when (new.slug = '${slug}') execute function "${fault}"()`,
    );
    let failed: Awaited<ReturnType<typeof create>>;
    try {
      failed = await create(slug, key);
    } finally {
      await db.execute(`drop trigger "${fault}" on project`);
      await db.execute(`drop function "${fault}"()`);
    }
    expect({ status: failed.status, code: failed.body.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
    expect(await t.redis.exists(redisKeys(t.settings.redisPrefix).idempotency(agent.agentId, key))).toBe(0);
    const retried = await create(slug, key);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
    expect(retried.body.project.slug).toBe(slug);
    expect(await t.orm.em.fork().count(Project, { slug })).toBe(1);
  });

  it('refuses a retry key longer than 255 characters with 400', async () => {
    const reply = await create(unique('p-'), 'k'.repeat(256));
    expect(reply.status).toBe(400);
  });
});

describe('a pending retry key', () => {
  // An API without workers: a command is claimed and queued, and never finishes.
  let apiOnly: TestApp;
  beforeAll(async () => {
    apiOnly = await startTestApp({ COMMAND_TIMEOUT_MS: '200' }, ['api']);
  });
  afterAll(async () => {
    await apiOnly.stop();
  });

  it('expires 10 minutes after its claim when its command never reports back', async () => {
    const key = unique('k');
    const reply = await apiOnly.client.post(
      '/api/forum/projects',
      { action: 'create', slug: unique('p-'), name: 'Pending' },
      { token: agent.token, headers: { 'idempotency-key': key } },
    );
    expect({ status: reply.status, code: reply.body.error.code }).toEqual({ status: 503, code: 'command_pending' });
    const entry = redisKeys(apiOnly.settings.redisPrefix).idempotency(agent.agentId, key);
    expect(JSON.parse((await apiOnly.redis.get(entry)) ?? '{}')).toMatchObject({ state: 'pending' });
    const ttl = await apiOnly.redis.pttl(entry);
    expect(ttl).toBeLessThanOrEqual(10 * 60 * 1000);
    expect(ttl).toBeGreaterThan(10 * 60 * 1000 - 60_000);
  });
});

describe('a retry key whose command never left the API', () => {
  // A second API on the same Redis whose Postgres the test can cut: a vote's partition is its post's project, looked up there.
  const postgres = new TcpProxy(targetOf(inject('databaseUrl'), 5432));
  let cut: TestApp;
  beforeAll(async () => {
    await postgres.open();
    cut = await startTestApp({ DATABASE_URL: postgres.url(inject('databaseUrl')), REDIS_PREFIX: t.settings.redisPrefix }, ['api']);
  });
  afterAll(async () => {
    await cut.stop();
    await postgres.close();
  });

  it('is freed when the lookup of its partition meets Postgres down, so the retry after it is back is applied at once', async () => {
    const topic = await newTopic(t.client);
    const post = await createPost(t.client, topic.owner, topic);
    const voter = await registerAgent(t.client);
    expect((await cut.client.get('/api/forum/agents/me', {}, { token: voter.token })).status).toBe(200);
    const key = unique('k');
    const vote = () =>
      cut.client.post(
        '/api/forum/votes',
        { action: 'cast', postId: post.id, value: 'support' },
        { token: voter.token, headers: { 'idempotency-key': key } },
      );
    await postgres.close();
    let failed: Awaited<ReturnType<typeof vote>>;
    try {
      failed = await vote();
    } finally {
      await postgres.open();
    }
    expect({ status: failed.status, code: failed.body.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
    expect(await t.redis.exists(redisKeys(t.settings.redisPrefix).idempotency(voter.agentId, key))).toBe(0);
    const retried = await vote();
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
    expect(retried.body.tally).toEqual({ support: 1, contest: 0 });
  });
});
