import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../src/db/postgres.ts';
import { statement } from '../../src/db/statements.ts';
import { createProject, registerAgent, unique, type Client, type Reply, type TestAgent } from '../support/client.ts';
import { createTopic, type TestTopic } from '../support/forum.ts';
import { Balancer } from '../support/haproxy.ts';
import { queuesIdle, workersListening } from '../support/queues.ts';
import { freePort } from '../../scripts/chaos/services.ts';
import { startServiceProcess, type ServiceProcess } from '../support/serviceProcess.ts';
import { until } from '../support/until.ts';
import { useTestApp } from '../support/testApp.ts';

// The database, the Redis prefix and a direct look at both; the service under test runs as separate processes on that prefix.
const t = useTestApp({}, ['api']);
const started: { stop(): Promise<unknown> }[] = [];
afterAll(async () => {
  for (const process of started.reverse()) await process.stop();
});

async function start(role: 'api' | 'worker', env: Record<string, string>): Promise<ServiceProcess> {
  // A worker is ready once one more process listens on the first queue (every scheme of partitions serves it).
  const listening = () => workersListening(t.redis, t.settings, 1);
  const before = role === 'worker' ? await listening() : 0;
  const ready = role === 'worker' ? async () => (await listening()) > before : undefined;
  // A short job lock: the job a killed worker held is taken over in seconds, not the default 30.
  const service = await startServiceProcess(
    'src/bin/main.ts',
    [role],
    { REDIS_PREFIX: t.settings.redisPrefix, DRAIN_GRACE_MS: '1000', WORKER_LOCK_MS: '2000', ...env },
    ready,
  );
  started.push(service);
  return service;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A write with its own retry key, sent again with that key until it is answered 200 (as a real client would). */
async function writeUntilAnswered(
  client: Client,
  send: (client: Client, key: string) => Promise<Reply>,
  statuses: number[],
): Promise<Reply> {
  const key = unique('k');
  for (let attempt = 0; attempt < 300; attempt++) {
    const reply = await send(client, key).catch(() => null);
    if (reply) statuses.push(reply.status);
    if (reply?.status === 200) return reply;
    await pause(50);
  }
  throw new Error('a write was never answered');
}

describe('many API and worker processes behind HAProxy', () => {
  it('changes PARTITIONS and the worker processes under load with nothing lost, doubled or out of order, and no queue left behind', async () => {
    const workerA = await start('worker', { PARTITIONS: '5' });
    const apiA = await start('api', { PARTITIONS: '5' });
    // The balancer is configured with both addresses before the second API exists, so this one port is picked
    // ahead (scripts/topology/balancer.ts cannot repoint a server yet); the second API fails its start at once if it was taken meanwhile.
    const portB = await freePort();
    const balancer = await Balancer.start([apiA.port, portB]);
    started.push(balancer);
    const lb = balancer.client;

    // Set up on the first API directly: the balancer may still be finding out that the second is not there yet.
    const direct = apiA.client;
    const owner = await registerAgent(direct);
    const shared: TestTopic = await createTopic(direct, owner, await createProject(direct, owner));
    const writers = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const agent = await registerAgent(direct);
        return { agent, topic: await createTopic(direct, agent, await createProject(direct, agent)), sent: [] as string[] };
      }),
    );

    const statuses: number[] = [];
    const acknowledged: string[] = [];
    let running = true;
    /** Each writer posts in order into its own project (waiting for each answer) and into the shared one. */
    const load = writers.map(async (writer, w) => {
      for (let n = 0; running; n++) {
        const topic = n % 3 === 2 ? shared : writer.topic;
        const body = `w${w}-${n}-${unique('')}`;
        writer.sent.push(body);
        await writeUntilAnswered(
          lb,
          (client, key) =>
            client.post(
              '/api/forum/posts',
              { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body },
              { token: writer.agent.token, headers: { 'idempotency-key': key } },
            ),
          statuses,
        );
        acknowledged.push(body);
      }
    });

    // Each phase lasts until the load made progress in it (a number of writes answered), not a fixed time.
    const progressed = (writes: number, phase: string) => {
      const target = acknowledged.length + writes;
      return until(() => acknowledged.length >= target, 60_000, `${writes} more writes answered ${phase}`);
    };
    await progressed(12, 'before the change');
    // The change, under load: a second API with fewer partitions and a second worker join...
    const apiB = await start('api', { PARTITIONS: '2', PORT: String(portB) });
    await start('worker', { PARTITIONS: '2' });
    await until(async () => (await apiB.client.get('/readyz')).status === 200, 10_000, 'the second API to be ready');
    await progressed(12, 'with both APIs and workers');
    // ...then the first worker dies while the first API still fills queues 2-4, which only the second worker is left to serve,
    // and the first API drains away.
    workerA.child.kill('SIGKILL');
    await progressed(6, 'after the first worker died');
    await apiA.stop();
    await progressed(12, 'after the first API left');
    running = false;
    await Promise.all(load);

    expect(statuses.filter((status) => status >= 500 && status !== 503)).toEqual([]);
    const rows = await run<{ body: string; id: string; project_slug: string }>(
      t.orm.em.fork(),
      statement('select body, id, project_slug from post where body = any(?::text[]) order by id', [acknowledged]),
    );
    // Every acknowledged write exactly once.
    expect(rows.map((row) => row.body).sort()).toEqual([...acknowledged].sort());
    // Each writer's posts, in id (commit) order, are in the order it sent them.
    for (const writer of writers) {
      const mine = new Set(writer.sent);
      expect(rows.filter((row) => mine.has(row.body)).map((row) => row.body)).toEqual(
        writer.sent.filter((body) => acknowledged.includes(body)),
      );
    }
    // Nothing left in any queue: the jobs enqueued under PARTITIONS=5 were served by a worker started with PARTITIONS=2.
    await until(() => queuesIdle(t.redis, t.settings), 15_000, 'every partition queue to be empty');
  }, 300_000);

  it('answers on one API instance what another instance started: a retry-key replay, a 304 for its ETag and its rate bucket', async () => {
    // Unscaled quotas: a project bucket of 10 refills one write in 6 minutes, not in the 3.6 s a loaded machine can
    // spend between two requests (the test app's 100× scale let B's write find the bucket refilled to A's count).
    const apiA = await start('api', { RATE_LIMIT_SCALE: '1' });
    const apiB = await start('api', { RATE_LIMIT_SCALE: '1' });
    await start('worker', {});
    const agent: TestAgent = await registerAgent(t.client);
    const key = unique('k');
    const create = (client: Client) =>
      client.post(
        '/api/forum/projects',
        { action: 'create', slug: `cross-${key}`.toLowerCase(), name: 'Across instances' },
        { token: agent.token, headers: { 'idempotency-key': key } },
      );
    const first = await create(apiA.client);
    expect(first.status).toBe(200);
    const replay = await create(apiB.client);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.project.id).toBe(first.body.project.id);

    const listed = await apiA.client.get('/api/forum/projects', {}, { headers: { 'accept-encoding': 'identity' } });
    const etag = listed.headers.get('etag') ?? '';
    expect(
      (await apiB.client.get('/api/forum/projects', {}, { headers: { 'accept-encoding': 'identity', 'if-none-match': etag } })).status,
    ).toBe(304);

    const onA = Number(first.headers.get('ratelimit-remaining'));
    const next = await apiB.client.post(
      '/api/forum/projects',
      { action: 'create', slug: unique('cross-'), name: 'Next' },
      { token: agent.token },
    );
    // One bucket for the agent whatever the instance: B's count goes on from A's (a bucket of its own would start full).
    expect(onA).toBe(9);
    expect(Number(next.headers.get('ratelimit-remaining'))).toBe(onA - 1);
  }, 180_000);
});
