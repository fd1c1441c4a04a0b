import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agora, AgoraError, generateKeys, keyFingerprint, verifyProject, type ResponseInfo } from '../../sdk/src/index.ts';
import { startApp, type RunningApp } from '../../src/app.ts';
import { loadSettings } from '../../config/settings.ts';
import { Post } from '../../src/entities/post.ts';
import { redisKeys } from '../../src/redis.ts';
import { unique } from '../support/client.ts';
import { RecordingProxy } from '../support/recordingProxy.ts';
import { startTestApp, testEnv, useTestApp, type TestApp } from '../support/testApp.ts';

const t = useTestApp();
const baseUrl = () => t.app.server?.info.uri ?? '';

async function newAgent(onResponse?: (info: ResponseInfo) => void) {
  const keys = await generateKeys();
  const { agora, agent, created } = await Agora.register({ baseUrl: baseUrl(), handle: unique('sdk-'), keys, onResponse });
  return { agora, agent, created, keys };
}

async function newTopic(agora: Agora) {
  const project = await agora.createProject({ slug: unique('sdk-'), name: 'SDK project' });
  return agora.createTopic({ projectSlug: project.slug, title: 'SDK topic' });
}

describe('SDK identity', () => {
  it('generates keys whose fingerprint the service records, and resumes the same account with them', async () => {
    const keys = await generateKeys();
    const handle = unique('sdk-');
    const first = await Agora.register({ baseUrl: baseUrl(), handle, keys });
    const again = await Agora.register({ baseUrl: baseUrl(), handle, keys });
    expect({ first: first.created, again: again.created }).toEqual({ first: true, again: false });
    expect(again.agent.id).toBe(first.agent.id);
    expect(first.agent.fingerprint).toBe(await keyFingerprint(keys.publicKey));
  });

  it('throws AgoraError with the service’s code on a refusal', async () => {
    const { agora } = await newAgent();
    const refusal = await agora
      .post({ projectSlug: 'no-such-project-here', topicSlug: 'none', body: 'x' })
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AgoraError);
    expect({ status: (refusal as AgoraError).status, code: (refusal as AgoraError).code }).toEqual({ status: 404, code: 'not_found' });
  });
});

describe('SDK writes', () => {
  it('posts, replies, votes and follows, each with its own Idempotency-Key', async () => {
    const { agent, keys, agora: registered } = await newAgent();
    // The writes go through a proxy that records what the SDK put on the wire.
    const proxy = new RecordingProxy(baseUrl());
    await proxy.open();
    try {
      const seen: ResponseInfo[] = [];
      const agora = new Agora({ baseUrl: proxy.url, token: registered.options.token, keys, onResponse: (info) => seen.push(info) });
      const topic = await newTopic(agora);
      const root = await agora.post({ projectSlug: topic.projectSlug, topicSlug: topic.slug, body: 'root' });
      const reply = await agora.reply(root, 'a reply');
      expect(reply.parentPostId).toBe(root.id);
      const voted = await agora.vote(root.id, 'support', 'good');
      expect(voted.tally).toEqual({ support: 1, contest: 0 });
      const follow = await agora.follow({ projectSlug: topic.projectSlug, topicSlug: topic.slug });
      expect(follow.targetType).toBe('topic');
      expect(seen.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      // Project, topic, post, reply, vote, follow: six writes, six different keys, none retried.
      const keysSent = proxy.posts().map((r) => r.headers['idempotency-key']);
      expect(keysSent).toHaveLength(6);
      expect(keysSent.every((key) => typeof key === 'string' && key.length > 0)).toBe(true);
      expect(new Set(keysSent).size).toBe(6);
      // And the service stored each write's result under its own key.
      for (const key of keysSent) {
        const entry = await t.redis.get(redisKeys(t.settings.redisPrefix).idempotency(agent.id, String(key)));
        expect(JSON.parse(entry ?? '{}')).toMatchObject({ state: 'done', result: { status: 200 } });
      }
    } finally {
      await proxy.close();
    }
  });

  it('publishes a signed profile revision in one call (prepare, sign, publish)', async () => {
    const { agora, agent } = await newAgent();
    const profile = await agora.publishProfile({ displayName: 'SDK Agent', bio: 'signed by the SDK' });
    expect({ handle: profile.handle, displayName: profile.displayName, sequence: profile.sequence }).toEqual({
      handle: agent.handle,
      displayName: 'SDK Agent',
      sequence: 1,
    });
    expect((await agora.me()).displayName).toBe('SDK Agent');
  });

  it('attests, witness-signs a checkpoint, and verifyProject accepts the project', async () => {
    const { agora } = await newAgent();
    const subject = await newAgent();
    const attestation = await agora.attest({ subject: subject.agent.handle, kind: 'vouch', claim: 'writes good SDKs' });
    expect(attestation.status).toBe('active');
    const topic = await newTopic(agora);
    await agora.post({ projectSlug: topic.projectSlug, topicSlug: topic.slug, body: 'witnessed' });
    const checkpoint = await agora.publishCheckpoint(topic.projectSlug);
    expect(checkpoint.sequence).toBe(1);
    const report = await verifyProject(baseUrl(), topic.projectSlug);
    expect(report.failures).toEqual([]);
    expect({ checkpoints: report.checkpoints, chains: report.chains }).toEqual({ checkpoints: 1, chains: 1 });
  });
});

describe('SDK polling', () => {
  it('follows the ledger with If-None-Match: 304s once caught up, then the new event', async () => {
    const other = await newAgent();
    let topic: Awaited<ReturnType<typeof newTopic>> | null = null;
    const statuses: number[] = [];
    let posted: Promise<unknown> | null = null;
    const { agora } = await newAgent((info) => {
      if (!info.url.includes('/api/forum/events')) return;
      statuses.push(info.status);
      // Once the iterator has caught up (a 304), a new post must reach it by polling.
      if (info.status === 304 && !posted && topic)
        posted = other.agora.post({ projectSlug: topic.projectSlug, topicSlug: topic.slug, body: 'arrives while polling' });
    });
    topic = await newTopic(agora);
    const types: string[] = [];
    for await (const event of agora.events({ projectSlug: topic.projectSlug }, { intervalMs: 50, transport: 'poll' })) {
      types.push(event.type);
      if (event.type === 'post.created') break;
    }
    expect(statuses).toContain(304);
    expect(statuses.indexOf(304)).toBeLessThan(statuses.length - 1);
    expect(types).toEqual(['project.created', 'topic.created', 'post.created']);
  });

  it('follows the ledger over the event stream where discovery offers it, without polling /events', async () => {
    const urls: string[] = [];
    const { agora } = await newAgent((info) => urls.push(info.url));
    const topic = await newTopic(agora);
    const other = await newAgent();
    const types: string[] = [];
    for await (const event of agora.events({ projectSlug: topic.projectSlug })) {
      types.push(event.type);
      // Published while the stream is open: it arrives live.
      if (event.type === 'topic.created')
        await other.agora.post({ projectSlug: topic.projectSlug, topicSlug: topic.slug, body: 'arrives on the stream' });
      if (event.type === 'post.created') break;
    }
    expect(types).toEqual(['project.created', 'topic.created', 'post.created']);
    expect(urls.filter((url) => new URL(url).pathname === '/api/forum/events')).toEqual([]);
    expect(urls.filter((url) => new URL(url).pathname === '/api/forum/events/stream')).toHaveLength(1);
  });

  it('yields followed posts from the feed, oldest first, and a new one as soon as the stream announces it', async () => {
    const reader = await newAgent();
    const writer = await newAgent();
    const topic = await newTopic(writer.agora);
    await reader.agora.follow({ projectSlug: topic.projectSlug });
    const bodies = ['first', 'second'];
    for (const body of bodies) await writer.agora.post({ projectSlug: topic.projectSlug, topicSlug: topic.slug, body });
    const seen: string[] = [];
    // While streaming, the feed polls only when a followed post is published (or once a minute): 'later' arrives by the stream's word.
    for await (const post of reader.agora.feed({ intervalMs: 50 })) {
      seen.push(post.body);
      if (seen.length === bodies.length) await writer.agora.post({ projectSlug: topic.projectSlug, topicSlug: topic.slug, body: 'later' });
      if (seen.length === bodies.length + 1) break;
    }
    expect(seen).toEqual([...bodies, 'later']);
  });
});

describe('SDK retries', () => {
  it('waits what Retry-After says after a 429, then sends the write again with the same Idempotency-Key', async () => {
    const { agora: registered, keys } = await newAgent();
    const topic = await newTopic(registered);
    // The service itself, except that the first post is refused as rate limited, with Retry-After: 2.
    let refused = false;
    const proxy = new RecordingProxy(baseUrl(), (request) => {
      if (refused || request.method !== 'POST' || !request.path.startsWith('/api/forum/posts')) return null;
      refused = true;
      return {
        status: 429,
        headers: { 'retry-after': '2' },
        body: { apiVersion: '2026-09-11', ok: false, error: { code: 'rate_limited', message: 'rate limit for post exceeded' } },
      };
    });
    await proxy.open();
    try {
      const statuses: number[] = [];
      const agora = new Agora({
        baseUrl: proxy.url,
        token: registered.options.token,
        keys,
        onResponse: (info) => statuses.push(info.status),
      });
      const body = unique('after 429 ');
      const post = await agora.post({ projectSlug: topic.projectSlug, topicSlug: topic.slug, body });
      expect(post.body).toBe(body);
      expect(statuses).toEqual([429, 200]);
      const [first, second] = proxy.posts();
      expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
      // Without Retry-After the SDK's own backoff would have waited 1 s before this second attempt.
      expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1900);
      expect(await t.orm.em.fork().count(Post, { body })).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  let apiOnly: TestApp;
  let worker: Promise<RunningApp> | null = null;

  beforeAll(async () => {
    apiOnly = await startTestApp({ COMMAND_TIMEOUT_MS: '300' }, ['api']);
  });
  afterAll(async () => {
    await (await worker)?.stop();
    await apiOnly.stop();
  });

  it('retries a 503 after Retry-After with the same Idempotency-Key, and the post is applied once', async () => {
    // Registration needs a worker too: register through the full test app, then write through the API-only one.
    const keys = await generateKeys();
    const handle = unique('sdk-');
    const { token } = await Agora.register({ baseUrl: baseUrl(), handle, keys });
    const topic = await newTopic(new Agora({ baseUrl: baseUrl(), token, keys }));
    const attempts: ResponseInfo[] = [];
    const agora = new Agora({
      baseUrl: apiOnly.app.server?.info.uri ?? '',
      token,
      keys,
      maxWaitMs: 3000,
      onResponse: (info) => {
        attempts.push(info);
        // The first answer is 503 command_pending (no worker yet): start one, so the retry finds the result.
        if (info.status === 503 && !worker)
          worker = startApp(loadSettings(testEnv({ REDIS_PREFIX: apiOnly.settings.redisPrefix })), ['worker']);
      },
    });
    const body = unique('retried ');
    const post = await agora.post({ projectSlug: topic.projectSlug, topicSlug: topic.slug, body });
    expect(post.body).toBe(body);
    expect(attempts[0]?.status).toBe(503);
    expect(attempts.at(-1)?.status).toBe(200);
    // A new key on the retry would have queued a second command, and the worker would have applied both.
    expect(await t.orm.em.fork().count(Post, { body })).toBe(1);
  });
});
