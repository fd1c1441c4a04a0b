import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Project } from '../../src/entities/project.ts';
import { registerAgent, unique, type Reply, type TestAgent } from '../support/client.ts';
import { newTopic, type TestTopic } from '../support/forum.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let agents: TestAgent[];
let topic: TestTopic;
const children: ChildProcess[] = [];

/** A worker role in its own OS process, so it can be killed with SIGKILL mid-job. */
function spawnWorker(): ChildProcess {
  const env = { ...process.env, DATABASE_URL: t.settings.databaseUrl, REDIS_URL: t.settings.redisUrl, REDIS_PREFIX: t.settings.redisPrefix, WORKER_LOCK_MS: '1000', LOG_LEVEL: 'silent', METRICS_PORT: '0' };
  const child = spawn(process.execPath, ['src/main.ts', 'worker'], { env, stdio: 'ignore' });
  children.push(child);
  return child;
}

beforeAll(async () => {
  const registrar = await startTestApp();
  agents = await Promise.all(Array.from({ length: 4 }, () => registerAgent(registrar.client)));
  topic = await newTopic(registrar.client);
  await registrar.stop();
  t = await startTestApp({ COMMAND_TIMEOUT_MS: '5000' }, ['api']);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await t.stop();
});

interface Write {
  slug: string;
  key: string;
  agent: TestAgent;
}

/**
 * Writes retried with their own keys across a SIGKILLed worker; answers the
 * acknowledged ones after every write got its 200.
 */
async function writeThroughACrash(send: (w: Write) => Promise<Reply>): Promise<{ writes: Write[]; acknowledged: Write[] }> {
  const first = spawnWorker();
  // A warm-up write answered by the new worker: on a busy machine a process can take longer to start than a command waits.
  const warmUp = { slug: unique('crash-warm-'), key: unique('k'), agent: agents[0] as TestAgent };
  for (let attempt = 0; attempt < 600 && (await send(warmUp)).status !== 200; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
  const writes = Array.from({ length: 40 }, (_, i) => ({ slug: unique('crash-'), key: unique('k'), agent: agents[i % agents.length] as TestAgent }));

  let answered = 0;
  let settled = 0;
  const firstReplies = writes.map((w) =>
    send(w).then((reply) => {
      settled++;
      if (reply.status === 200) answered++;
      return reply;
    }),
  );
  // Kill once some writes are acknowledged and others are still in flight (never wait forever on a slow machine).
  while (answered < 5 && settled < writes.length) await new Promise((resolve) => setTimeout(resolve, 5));
  first.kill('SIGKILL');
  const replies = await Promise.all(firstReplies);
  spawnWorker();

  const acknowledged = writes.filter((_, i) => replies[i]?.status === 200);
  expect(acknowledged.length).toBeGreaterThan(0);
  // Every client retries with its own key until it gets its result (as a real client would, in parallel).
  const final = await Promise.all(
    writes.map(async (w, i) => {
      let reply = replies[i] as Reply;
      for (let attempt = 0; attempt < 300 && reply.status !== 200; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        reply = await send(w);
      }
      return reply;
    }),
  );
  expect(final.map((r) => r.status)).toEqual(writes.map(() => 200));
  // The next scenario starts with no worker of this one left.
  for (const child of children.splice(0)) child.kill('SIGKILL');
  return { writes, acknowledged };
}

describe('a worker process killed mid-run', () => {
  it('loses no acknowledged write and applies every retried write exactly once', async () => {
    const { writes, acknowledged } = await writeThroughACrash((w) =>
      t.client.post('/api/forum/projects', { action: 'create', slug: w.slug, name: 'Crash' }, { token: w.agent.token, headers: { 'idempotency-key': w.key } }),
    );
    const em = t.orm.em.fork();
    for (const { slug } of acknowledged) expect(await em.count(Project, { slug })).toBe(1);
    expect(await em.count(Project, { slug: { $in: writes.map((w) => w.slug) } })).toBe(writes.length);
  }, 120_000);

  it('loses no acknowledged post of a set-based batch and applies every retried post exactly once', async () => {
    // Every post goes to one project: one partition, so the kill lands on batches of posts.
    const { writes, acknowledged } = await writeThroughACrash((w) =>
      t.client.post('/api/forum/posts', { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: w.slug }, { token: w.agent.token, headers: { 'idempotency-key': w.key } }),
    );
    const counts = await t.orm.em.fork().execute<{ body: string; n: number }[]>('select body, count(*)::int as n from post where body in (?) group by body', [writes.map((w) => w.slug)]);
    expect(counts).toHaveLength(writes.length);
    expect(counts.every((c) => c.n === 1)).toBe(true);
    for (const { slug } of acknowledged) expect(counts.some((c) => c.body === slug)).toBe(true);
  }, 120_000);
});
