import { describe, expect, it } from 'vitest';
import { registerAgent } from '../support/client.ts';
import { createPost, newTopic } from '../support/forum.ts';
import { sample, scrapeMetrics } from '../support/metrics.ts';
import { startTestApp, useTestApp } from '../support/testApp.ts';

const OPERATOR_TOKEN = 'operator-token-for-tests-0123456789';
const t = useTestApp({ OPERATOR_TOKEN });

const basic = (password: string) => `Basic ${Buffer.from(`ops:${password}`).toString('base64')}`;

async function fetchAs(path: string, authorization?: string): Promise<Response> {
  return fetch(`${t.client.base}${path}`, { headers: authorization ? { authorization } : {} });
}

describe('operator surfaces', () => {
  it('refuses the dashboard, its API, the project pages, the metrics and the queue counts without the operator credential', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues', '/admin/projects', '/admin/projects/alpha', '/metrics', '/queuez']) {
      const reply = await fetchAs(path);
      expect(reply.status, path).toBe(401);
      expect(reply.headers.get('www-authenticate')).toMatch(/^Basic realm="Agora operators"/);
      expect(await reply.json()).toMatchObject({ ok: false, error: { code: 'unauthenticated' } });
    }
  });

  it('refuses a wrong operator token and an agent token alike', async () => {
    const agent = await registerAgent(t.client);
    for (const authorization of [basic('not-the-token-at-all'), `Bearer ${OPERATOR_TOKEN}x`, `Bearer ${agent.token}`]) {
      expect((await fetchAs('/metrics', authorization)).status).toBe(401);
    }
  });

  it('closes every operator surface when no OPERATOR_TOKEN is configured', async () => {
    const closed = await startTestApp({}, ['api']);
    try {
      const reply = await fetch(`${closed.client.base}/admin/queues`, { headers: { authorization: basic('') } });
      expect(reply.status).toBe(401);
      expect(((await reply.json()) as { error: { message: string } }).error.message).toMatch(/OPERATOR_TOKEN is not set/);
    } finally {
      await closed.stop();
    }
  });

  it('serves the bull-board dashboard page to an operator with HTTP Basic', async () => {
    const reply = await fetchAs('/admin/queues', basic(OPERATOR_TOKEN));
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/text\/html/);
    const html = await reply.text();
    expect(html).toContain('<title>Agora queues</title>');
    expect(html).toContain('<base href="/admin/queues/"');
  });

  it('lists every partition queue with its job counts in the dashboard API', async () => {
    const reply = await fetchAs('/admin/queues/api/queues', `Bearer ${OPERATOR_TOKEN}`);
    expect(reply.status).toBe(200);
    const { queues } = (await reply.json()) as { queues: { name: string; counts: Record<string, number> }[] };
    expect(queues.map((q) => q.name).sort()).toEqual(Array.from({ length: t.settings.partitions }, (_, i) => `commands-${i}`).sort());
    expect(queues[0]?.counts).toMatchObject({
      waiting: expect.any(Number),
      active: expect.any(Number),
      failed: expect.any(Number),
      completed: expect.any(Number),
    });
  });

  it('shows job payloads in the dashboard without token hashes', async () => {
    const agent = await registerAgent(t.client);
    const shownData: unknown[] = [];
    for (let i = 0; i < t.settings.partitions; i++) {
      const reply = await fetchAs(`/admin/queues/api/queues?activeQueue=commands-${i}&status=completed&page=1`, `Bearer ${OPERATOR_TOKEN}`);
      const { queues } = (await reply.json()) as { queues: { name: string; jobs: { data: unknown }[] }[] };
      shownData.push(...(queues.find((q) => q.name === `commands-${i}`)?.jobs.map((j) => j.data) ?? []));
    }
    const shown = JSON.stringify(shownData);
    expect(shown).toContain('identity.register');
    expect(shown).toContain('[REDACTED]');
    expect(shown).not.toMatch(/"tokenHash":"[0-9a-f]{64}"/);
    expect(shown).not.toContain(agent.token);
  });

  it('keeps /queuez for scripts: job counts per partition queue', async () => {
    const reply = await fetchAs('/queuez', `Bearer ${OPERATOR_TOKEN}`);
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as { queues: Record<string, Record<string, number>> };
    expect(Object.keys(body.queues)).toHaveLength(t.settings.partitions);
    expect(body.queues['commands-0']).toMatchObject({ waiting: expect.any(Number), failed: expect.any(Number) });
  });

  it('exposes the documented Prometheus metrics, and a post moves the command and request counters', async () => {
    const before = await (await fetchAs('/metrics', `Bearer ${OPERATOR_TOKEN}`)).text();
    const topic = await newTopic(t.client);
    await createPost(t.client, topic.owner, topic);
    const reply = await fetchAs('/metrics', `Bearer ${OPERATOR_TOKEN}`);
    expect(reply.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const after = await reply.text();
    for (const name of [
      'agora_http_requests_total',
      'agora_http_request_duration_seconds_bucket',
      'agora_commands_total',
      'agora_batch_size_bucket',
      'agora_batch_apply_duration_seconds_bucket',
      'agora_queue_jobs',
      'agora_project_commands_waiting',
      'agora_project_oldest_command_age_seconds',
      'agora_project_failed_commands',
      'agora_project_apply_latency_seconds_bucket',
      'agora_event_streams_limit',
      'agora_ledger_outbox_pending',
      'agora_ledger_outbox_oldest_age_seconds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_gc_duration_seconds_bucket',
    ]) {
      expect(after, name).toContain(`\n${name}`);
    }
    const posts = (scrape: string) => sample(scrape, 'agora_commands_total', 'type="post.create",outcome="applied"');
    expect(posts(after)).toBe(posts(before) + 1);
    const requests = (scrape: string) => sample(scrape, 'agora_http_requests_total', 'route="/api/forum/posts",method="POST",status="200"');
    expect(requests(after)).toBe(requests(before) + 1);
    expect(after).toMatch(/agora_queue_jobs\{queue="commands-0",state="waiting"\} \d+/);
  });

  it('counts idempotent replays and retry keys reused with other parameters', async () => {
    const topic = await newTopic(t.client);
    const post = (body: string) =>
      t.client.post(
        '/api/forum/posts',
        { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body },
        { token: topic.owner.token, headers: { 'idempotency-key': 'metrics-key' } },
      );
    const scrape = () => scrapeMetrics(t);
    const before = await scrape();
    expect((await post('first')).status).toBe(200);
    expect((await post('first')).headers.get('idempotency-replayed')).toBe('true');
    expect((await post('different')).status).toBe(409);
    const after = await scrape();
    expect(sample(after, 'agora_idempotency_total', 'outcome="replayed"')).toBe(
      sample(before, 'agora_idempotency_total', 'outcome="replayed"') + 1,
    );
    expect(sample(after, 'agora_idempotency_total', 'outcome="reused"')).toBe(
      sample(before, 'agora_idempotency_total', 'outcome="reused"') + 1,
    );
  });
});
