import { spawn } from 'node:child_process';
import { freePort } from '../../scripts/chaos/services.ts';
import { once } from 'node:events';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.ts';
import { allPartitionQueueNames } from '../../src/pipeline/partitions.ts';
import { Project } from '../../src/entities/project.ts';
import { Client, registerAgent, unique, type TestAgent } from '../support/client.ts';
import { keysMatching, startTestApp, testEnv, type TestApp } from '../support/testApp.ts';

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
    const send = () => apiOnly.client.post('/api/forum/projects', { action: 'create', slug, name: 'Late' }, { token: agent.token, headers: { 'idempotency-key': 'late-1' } });
    const pending = await send();
    expect(pending.status).toBe(503);
    expect(pending.body.error.code).toBe('command_pending');
    expect(Number(pending.headers.get('retry-after'))).toBeGreaterThan(0);

    const stillRunning = await send();
    expect(stillRunning.status).toBe(409);
    expect(stillRunning.body.error.code).toBe('idempotency_in_progress');

    lateWorker = await startApp(apiOnly.settings, ['worker']);
    let settled = stillRunning;
    for (let i = 0; i < 100 && settled.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      settled = await send();
    }
    expect(settled.status).toBe(200);
    expect(settled.headers.get('idempotency-replayed')).toBe('true');
    expect(settled.body.project.slug).toBe(slug);
    expect(await full.orm.em.fork().count(Project, { slug })).toBe(1);
  });
});

describe('a retry key whose API instance died', () => {
  it('re-dispatches the command that was never enqueued and answers its result, applied once', async () => {
    const survivor = await startTestApp({ COMMAND_TIMEOUT_MS: '20000' }, ['api']);
    stops.push(() => survivor.stop());
    const prefix = survivor.settings.redisPrefix;
    // A port free now: a random one may be taken (another run's instance), and this test would then talk to that instead.
    const port = String(await freePort());
    const doomed = spawn(process.execPath, ['src/main.ts', 'api'], { env: { ...process.env, ...testEnv({ PORT: port, REDIS_PREFIX: prefix, COMMAND_TIMEOUT_MS: '20000' }) }, stdio: 'ignore' });
    const doomedClient = new Client(`http://127.0.0.1:${port}`);
    for (let i = 0; i < 100 && (await doomedClient.get('/readyz').catch(() => null))?.status !== 200; i++) await new Promise((resolve) => setTimeout(resolve, 100));

    const slug = unique('p-');
    const send = (client: Client) => client.post('/api/forum/projects', { action: 'create', slug, name: 'Orphan' }, { token: agent.token, headers: { 'idempotency-key': 'orphan-1' } });
    void send(doomedClient).catch(() => null);
    // The doomed instance has claimed the key; its command is then lost before any worker sees it.
    const queues = allPartitionQueueNames(survivor.settings.partitions).map((name) => new Queue(name, { connection: survivor.redis, prefix }));
    for (let i = 0; i < 100 && (await keysMatching(survivor.redis, `${prefix}:idem:*`)).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 0; i < 100 && (await Promise.all(queues.map((q) => q.getWaitingCount()))).every((n) => n === 0); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    doomed.kill('SIGKILL');
    await once(doomed, 'exit');
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
  }, 30_000);
});
