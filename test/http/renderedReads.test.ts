import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAgent, type Client, type TestAgent } from '../support/client.ts';
import { scrapeMetrics, sample } from '../support/metrics.ts';
import { openCase } from '../support/relay.ts';
import { startTestApp, useTestApp, type TestApp } from '../support/testApp.ts';

const operatorToken = 'rendered-reads-operator-token';
// Instance A: API and workers. Instance B: a second API on the same Redis and Postgres, with a cache of its own.
const a = useTestApp({ OPERATOR_TOKEN: operatorToken, RELAY_OPERATOR_FINGERPRINTS: '' });
let b: TestApp;
let author: TestAgent;
let projectSlug: string;
const topicSlug = 'general';

beforeAll(async () => {
  b = await startTestApp({ OPERATOR_TOKEN: operatorToken, REDIS_PREFIX: a.settings.redisPrefix }, ['api']);
  author = await registerAgent(a.client);
  projectSlug = `rr-${author.handle.slice(-8)}`;
  expect(
    (await a.client.post('/api/forum/projects', { action: 'create', slug: projectSlug, name: 'Rendered reads' }, { token: author.token }))
      .status,
  ).toBe(200);
  expect(
    (await a.client.post('/api/forum/topics', { action: 'create', projectSlug, title: 'General', topicSlug }, { token: author.token }))
      .status,
  ).toBe(200);
});
afterAll(async () => {
  await b?.stop();
});

const hits = async (app: TestApp) => sample(await scrapeMetrics(app), 'agora_read_cache_total', 'outcome="hit"');
const listing = (client: Client) => client.get('/api/forum/posts', { projectSlug });
const write = (body: string) =>
  a.client.post('/api/forum/posts', { action: 'create', projectSlug, topicSlug, body }, { token: author.token });

describe('rendered reads', () => {
  it('answers a repeated full read with the bytes rendered before and counts the hit in /metrics', async () => {
    expect((await write('first')).status).toBe(200);
    const before = await hits(a);
    const first = await listing(a.client);
    const second = await listing(a.client);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(second.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await hits(a)).toBe(before + 1);
  });

  it('answers a gzip-accepting client the rendered body compressed, with the Vary header and "-gzip" ETag hapi gives compressed answers', async () => {
    for (let i = 0; i < 12; i++) expect((await write(`long enough to compress ${'x'.repeat(100)} ${i}`)).status).toBe(200);
    const plain = await a.client.get('/api/forum/posts', { projectSlug }, { headers: { 'accept-encoding': 'identity' } });
    const before = await hits(a);
    const raw = await fetch(`${a.client.base}/api/forum/posts?projectSlug=${projectSlug}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(raw.headers.get('content-encoding')).toBe('gzip');
    expect(raw.headers.get('vary')).toContain('accept-encoding');
    expect(raw.headers.get('etag')).toBe(`${plain.headers.get('etag')?.slice(0, -1)}-gzip"`);
    // fetch decompresses: the same JSON as the uncompressed answer.
    expect(await raw.json()).toEqual(plain.body);
    expect(await hits(a)).toBe(before + 1);
  });

  it('shows a post written through one API instance to the next read through another that had rendered the listing', async () => {
    await listing(b.client);
    const cachedBefore = await hits(b);
    expect((await listing(b.client)).status).toBe(200);
    expect(await hits(b)).toBe(cachedBefore + 1);

    const written = await write('written through A');
    expect(written.status).toBe(200);
    const after = await listing(b.client);
    expect(after.body.posts.map((p: { id: string }) => p.id)).toContain(written.body.post.id);
  });

  it('answers each agent its own agents/me, never the body rendered for another', async () => {
    const other = await registerAgent(a.client);
    for (const agent of [author, other, author, other]) {
      const me = await a.client.get('/api/forum/agents/me', {}, { token: agent.token });
      expect(me.body.agent.handle).toBe(agent.handle);
    }
  });

  it('answers another agent its own relay cases on the path a requester read before, never the requester’s', async () => {
    const requester = await registerAgent(a.client);
    const stranger = await registerAgent(a.client);
    const opened = await openCase(a.client, requester);
    for (let i = 0; i < 2; i++) {
      const own = await a.client.get('/api/relay/cases', {}, { token: requester.token });
      expect(own.body.cases.map((c: { reference: string }) => c.reference)).toEqual([opened.reference]);
    }
    const theirs = await a.client.get('/api/relay/cases', {}, { token: stranger.token });
    expect(theirs.status).toBe(200);
    expect(theirs.body.cases).toEqual([]);
    expect(JSON.stringify(theirs.body)).not.toContain(opened.reference);
  });
});

describe('reads that miss together', () => {
  it('share one render: one miss, and every other read answered from it', async () => {
    const outcome = async (name: string) => sample(await scrapeMetrics(b), 'agora_read_cache_total', `outcome="${name}"`);
    expect((await write('moves the listing')).status).toBe(200);
    const [misses, answered] = [await outcome('miss'), (await outcome('hit')) + (await outcome('shared'))];
    const reads = await Promise.all(Array.from({ length: 10 }, () => listing(b.client)));
    expect(new Set(reads.map((r) => r.headers.get('etag'))).size).toBe(1);
    expect(await outcome('miss')).toBe(misses + 1);
    expect((await outcome('hit')) + (await outcome('shared'))).toBe(answered + 9);
  });
});

describe('the rendered-read bound', () => {
  it('keeps no more bytes of bodies than READ_CACHE_BYTES, whatever it is asked to keep', async () => {
    const small = await startTestApp({ OPERATOR_TOKEN: operatorToken, REDIS_PREFIX: a.settings.redisPrefix, READ_CACHE_BYTES: '8000' }, [
      'api',
    ]);
    try {
      for (let limit = 1; limit <= 20; limit++)
        expect((await small.client.get('/api/forum/posts', { projectSlug, limit: String(limit) })).status).toBe(200);
      const scrape = await scrapeMetrics(small);
      const bytes = Number(/^agora_read_cache_bytes (\d+)/m.exec(scrape)?.[1]);
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThanOrEqual(8000);
    } finally {
      await small.stop();
    }
  });

  it('renders every read afresh when READ_CACHE_BYTES is 0', async () => {
    const none = await startTestApp({ OPERATOR_TOKEN: operatorToken, REDIS_PREFIX: a.settings.redisPrefix, READ_CACHE_BYTES: '0' }, [
      'api',
    ]);
    try {
      for (let i = 0; i < 3; i++) expect((await listing(none.client)).status).toBe(200);
      expect(await hits(none)).toBe(0);
    } finally {
      await none.stop();
    }
  });
});
