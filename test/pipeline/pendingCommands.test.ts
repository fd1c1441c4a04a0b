import { once } from 'node:events';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.ts';
import { allPartitionQueueNames } from '../../src/pipeline/partitions.ts';
import { Project } from '../../src/entities/project.ts';
import { registerAgent, unique, type Client, type TestAgent } from '../support/client.ts';
import { startServiceProcess } from '../support/serviceProcess.ts';
import { until } from '../support/until.ts';
import { keysMatching, startTestApp, type TestApp } from '../support/testApp.ts';

let full: TestApp;
let apiOnly: TestApp;
let agent: TestAgent;
let lateWorker: RunningApp | null = null;
const stops: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  // A complete app to register with, and an API instance of another deployment whose workers are not running yet.
  full = await startTestApp();
  agent = await registerAgent(full.client);
  apiOnly = await startTestApp({ COMMAND_TIMEOUT_MS: '300' }, ['api']);
});
afterAll(async () => {
  for (const stop of stops) await stop();
  await lateWorker?.stop();
  await apiOnly.stop();
  await full.stop();
});

describe('a command that outlives the HTTP wait', () => {
  it('answers 503 command_pending, then the eventual result on retry with the same key, applied once', async () => {
    const slug = unique('p-');
    const send = () =>
      apiOnly.client.post(
        '/api/forum/projects',
        { action: 'create', slug, name: 'Late' },
        { token: agent.token, headers: { 'idempotency-key': 'late-1' } },
      );
    const pending = await send();
    expect(pending.status).toBe(503);
    expect(pending.body.error.code).toBe('command_pending');
    expect(Number(pending.headers.get('retry-after'))).toBeGreaterThan(0);

    lateWorker = await startApp(apiOnly.settings, ['worker']);
    // The command enqueued by the first request is applied by the late worker; a retry then finds its result.
    await until(
      async () => (await full.orm.em.fork().count(Project, { slug })) > 0,
      30_000,
      'the late worker to apply the pending command',
    );
    const settled = await send();
    expect(settled.status).toBe(200);
    expect(settled.headers.get('idempotency-replayed')).toBe('true');
    expect(settled.body.project.slug).toBe(slug);
    expect(await full.orm.em.fork().count(Project, { slug })).toBe(1);
  });

  it('answers 409 idempotency_in_progress to a retry while the first request with its key still waits', async () => {
    const waiting = await startTestApp({ COMMAND_TIMEOUT_MS: '60000' }, ['api']);
    stops.push(() => waiting.stop());
    const slug = unique('p-');
    const send = () =>
      waiting.client.post(
        '/api/forum/projects',
        { action: 'create', slug, name: 'Waiting' },
        { token: agent.token, headers: { 'idempotency-key': 'waiting-1' } },
      );
    const first = send();
    await until(
      async () => (await keysMatching(waiting.redis, `${waiting.settings.redisPrefix}:idem:*`)).length > 0,
      30_000,
      'the first request to claim its key',
    );
    const second = await send();
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('idempotency_in_progress');
    const worker = await startApp(waiting.settings, ['worker']);
    stops.unshift(() => worker.stop());
    expect((await first).status).toBe(200);
    expect(await full.orm.em.fork().count(Project, { slug })).toBe(1);
  }, 90_000);
});

describe('a retry key whose API instance died', () => {
  it('re-dispatches the command that was never enqueued and answers its result, applied once', async () => {
    const survivor = await startTestApp({ COMMAND_TIMEOUT_MS: '20000' }, ['api']);
    stops.push(() => survivor.stop());
    const prefix = survivor.settings.redisPrefix;
    const doomed = await startServiceProcess('src/bin/main.ts', ['api'], { REDIS_PREFIX: prefix, COMMAND_TIMEOUT_MS: '20000' });
    const doomedClient = doomed.client;
    await until(async () => (await doomedClient.get('/readyz')).status === 200, 30_000, 'the doomed API instance to be ready');

    const slug = unique('p-');
    const send = (client: Client) =>
      client.post(
        '/api/forum/projects',
        { action: 'create', slug, name: 'Orphan' },
        { token: agent.token, headers: { 'idempotency-key': 'orphan-1' } },
      );
    void send(doomedClient).catch(() => null);
    // The doomed instance has claimed the key; its command is then lost before any worker sees it.
    const queues = allPartitionQueueNames(survivor.settings.partitions).map(
      (name) => new Queue(name, { connection: survivor.redis, prefix }),
    );
    await until(
      async () => (await keysMatching(survivor.redis, `${prefix}:idem:*`)).length > 0,
      30_000,
      'the doomed instance to claim the key',
    );
    await until(
      async () => (await Promise.all(queues.map((q) => q.getWaitingCount()))).some((n) => n > 0),
      30_000,
      'the doomed instance to enqueue its command',
    );
    doomed.child.kill('SIGKILL');
    await once(doomed.child, 'exit');
    await Promise.all(queues.map((q) => q.drain()));
    await Promise.all(queues.map((q) => q.close()));

    const worker = await startApp(survivor.settings, ['worker']);
    stops.unshift(() => worker.stop());
    const retried = await send(survivor.client);
    expect(retried.status).toBe(200);
    expect(retried.body.project.slug).toBe(slug);
    expect(retried.headers.get('idempotency-replayed')).toBe('true');
    expect(await full.orm.em.fork().count(Project, { slug })).toBe(1);
    const again = await send(survivor.client);
    expect(again.status).toBe(200);
    expect(await full.orm.em.fork().count(Project, { slug })).toBe(1);
  }, 90_000);
});
