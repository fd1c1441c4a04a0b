import { randomBytes } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../../src/tracing/sdk.ts';

// Tracing starts before the app's modules are imported (as src/bin/main.ts does), so hapi, ioredis and pg are instrumented.
const exporter = new InMemorySpanExporter();
const tracing = startTracing({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const { startApp } = await import('../../src/app.ts');
const { startTestApp } = await import('../support/testApp.ts');
const { createProject, registerAgent, unique } = await import('../support/client.ts');
const { createTopic } = await import('../support/forum.ts');
const { until } = await import('../support/until.ts');

type TestApp = Awaited<ReturnType<typeof startTestApp>>;
type RunningApp = Awaited<ReturnType<typeof startApp>>;

const spans = () => exporter.getFinishedSpans();
const isProcessSpan = (span: ReadableSpan) => span.name.startsWith('process commands-');
const requestIdsOf = (span: ReadableSpan) => (span.attributes['agora.request_ids'] as string[] | undefined) ?? [];
const serverSpanOf = (requestId: string) =>
  spans().find(
    (span) =>
      span.kind === SpanKind.SERVER && span.attributes['agora.request_id'] === requestId && span.instrumentationScope.name.includes('http'),
  );

function ancestors(span: ReadableSpan): ReadableSpan[] {
  const byId = new Map(spans().map((s) => [s.spanContext().spanId, s]));
  const chain: ReadableSpan[] = [];
  for (let parent = byId.get(span.parentSpanContext?.spanId ?? ''); parent; parent = byId.get(parent.parentSpanContext?.spanId ?? ''))
    chain.push(parent);
  return chain;
}

/** The API in this test's app; its workers in a second app on the same queues, reached only through Redis. */
let api: TestApp;
let workers: RunningApp | null = null;
let topic: { projectSlug: string; topicSlug: string };
let token: string;

const startWorkers = async () => {
  workers = await startApp(api.settings, ['worker']);
};
const stopWorkers = async () => {
  await workers?.stop();
  workers = null;
};

beforeAll(async () => {
  // Long enough for the held posts of the batch test to wait for the workers on a loaded machine.
  api = await startTestApp({ COMMAND_TIMEOUT_MS: '60000' }, ['api']);
  await startWorkers();
  const owner = await registerAgent(api.client);
  topic = await createTopic(api.client, owner, await createProject(api.client, owner));
  token = owner.token;
}, 90_000);

afterAll(async () => {
  await stopWorkers();
  await api?.stop();
  await tracing.shutdown();
});

const post = (requestId: string, headers: Record<string, string> = {}) =>
  api.client.post(
    '/api/forum/posts',
    { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: unique('body ') },
    { token, headers: { 'x-request-id': requestId, ...headers } },
  );

const processSpanFor = (requestId: string) => spans().find((span) => isProcessSpan(span) && requestIdsOf(span).includes(requestId));

describe('traces across the queue', () => {
  it("one post is one trace from the HTTP request through the job to the worker's batch and its SQL, with the request id on the spans", async () => {
    const requestId = unique('trace-one-');
    const reply = await post(requestId);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-request-id')).toBe(requestId);
    await until(
      () => processSpanFor(requestId) !== undefined && serverSpanOf(requestId) !== undefined,
      30_000,
      'the request and batch spans',
    );

    const server = serverSpanOf(requestId);
    const batch = processSpanFor(requestId);
    if (!server || !batch) throw new Error('spans missing');
    const traceId = server.spanContext().traceId;
    expect(batch.spanContext().traceId).toBe(traceId);
    // The worker's batch descends from the request: HTTP → hapi route → enqueue batch → BullMQ add → process.
    const batchAncestors = ancestors(batch).map((span) => span.name);
    expect(batchAncestors).toEqual(expect.arrayContaining(['enqueue batch', server.name]));
    expect(batchAncestors.some((name) => name.startsWith('add commands-'))).toBe(true);
    // The batch's SQL: the post's insert, inside the worker's process span.
    const sql = spans().filter(
      (span) => span.spanContext().traceId === traceId && span.instrumentationScope.name.includes('pg') && ancestors(span).includes(batch),
    );
    expect(sql.map((span) => String(span.attributes['db.query.text'] ?? span.attributes['db.statement'] ?? ''))).toEqual(
      expect.arrayContaining([expect.stringMatching(/insert into "?post"?/i)]),
    );
  }, 60_000);

  it('records no span at all, in the API, the queue or the worker, for a request its caller did not sample', async () => {
    exporter.reset();
    const traceId = randomBytes(16).toString('hex');
    const reply = await post(unique('trace-unsampled-'), { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-00` });
    expect(reply.status).toBe(200);
    // Its worker has answered; a sampled post's spans are all ended by then but the process span, which ends just after.
    const sampled = unique('trace-sampled-');
    expect((await post(sampled)).status).toBe(200);
    await until(() => processSpanFor(sampled) !== undefined, 30_000, 'the sampled post processed');
    const sampledTrace = serverSpanOf(sampled)?.spanContext().traceId;
    expect(spans().filter((span) => span.spanContext().traceId !== sampledTrace)).toEqual([]);
  }, 60_000);

  it("a batch of many commands links to each command's request trace", async () => {
    // Without workers the first post's batch waits in its queue; the posts sent behind it gather into one batch.
    await stopWorkers();
    exporter.reset();
    const enqueued = () =>
      spans()
        .filter((span) => span.name === 'enqueue batch')
        .flatMap(requestIdsOf);
    const first = unique('trace-first-');
    const replies = [post(first)];
    await until(() => enqueued().includes(first), 30_000, 'the first batch enqueued');
    const gathered = Array.from({ length: 3 }, (_, i) => unique(`trace-many-${i}-`));
    replies.push(...gathered.map((id) => post(id)));
    await until(() => gathered.every((id) => enqueued().includes(id)), 30_000, 'the posts behind it enqueued');
    await startWorkers();
    expect((await Promise.all(replies)).map((reply) => reply.status)).toEqual([200, 200, 200, 200]);
    await until(() => gathered.every((id) => processSpanFor(id) !== undefined), 30_000, 'the gathered batches processed');

    const batches = [...new Set(gathered.map((id) => processSpanFor(id)))].filter((span) => span !== undefined);
    const many = batches.filter((span) => requestIdsOf(span).length > 1);
    expect(many.length, 'posts sent together travel as one batch').toBeGreaterThan(0);
    for (const batch of many) {
      const ids = requestIdsOf(batch);
      const requestTraces = ids.map((id) => serverSpanOf(id)?.spanContext().traceId);
      expect(new Set(requestTraces).size).toBe(ids.length);
      expect(batch.links.map((link) => link.context.traceId)).toEqual(requestTraces);
      expect(batch.links.map((link) => link.attributes?.['agora.request_id'])).toEqual(ids);
    }
  }, 120_000);
});
