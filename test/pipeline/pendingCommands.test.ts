import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.ts';
import { Project } from '../../src/entities/project.ts';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let full: TestApp;
let apiOnly: TestApp;
let agent: TestAgent;
let lateWorker: RunningApp | null = null;
beforeAll(async () => {
  // A complete app to register with, and an API instance of another deployment whose workers are not running yet.
  full = await startTestApp();
  agent = await registerAgent(full.client);
  apiOnly = await startTestApp({ COMMAND_TIMEOUT_MS: '300' }, ['api']);
});
afterAll(async () => {
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
