import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.ts';
import { Post } from '../../src/entities/post.ts';
import { projectKey } from '../../src/pipeline/batchName.ts';
import { partitionOf, partitionQueueName } from '../../src/pipeline/partitions.ts';
import { Client, unique } from '../support/client.ts';
import { newTopic } from '../support/forum.ts';
import { workersOn } from '../support/queues.ts';
import { useTestApp } from '../support/testApp.ts';
import { until } from '../support/until.ts';

// The API of PARTITIONS=2 under test; its workers come and go in the scenario.
const t = useTestApp({ PARTITIONS: '2' }, ['api']);
const started: RunningApp[] = [];
let dying: ChildProcess | null = null;
afterAll(async () => {
  dying?.kill('SIGKILL');
  for (const app of started.reverse()) await app.stop();
});

describe('a job left running in a partition queue past every live worker PARTITIONS', () => {
  it('is taken over by a worker with fewer partitions once its lock lapses, and its command answered once', async () => {
    const first = await startApp(t.settings, ['worker']);
    const topic = await newTopic(t.client);
    let slug = topic.projectSlug;
    // A project whose queue under 8 partitions is past the first two; its topic is made on the first API.
    let into = topic;
    while (partitionOf(projectKey(slug), 8) < 2) {
      into = await newTopic(t.client);
      slug = into.projectSlug;
    }
    await first.stop();
    const queue = partitionQueueName(partitionOf(projectKey(slug), 8));

    // A worker with PARTITIONS=8 that dies (SIGKILL) inside its first batch transaction.
    dying = spawn(process.execPath, ['src/bin/main.ts', 'worker'], {
      env: {
        ...process.env,
        DATABASE_URL: t.settings.databaseUrl,
        REDIS_URL: t.settings.redisUrl,
        REDIS_PREFIX: t.settings.redisPrefix,
        PARTITIONS: '8',
        LOG_LEVEL: 'warn',
        METRICS_PORT: '0',
        AGORA_FAILPOINTS: 'batch-mid-transaction',
      },
      stdio: 'ignore',
    });
    const exited = once(dying, 'exit');
    await until(async () => (await workersOn(t.redis, t.settings, queue)) > 0, 20_000, 'the dying worker to serve the queue');

    const wide = await startApp({ ...t.settings, partitions: 8 }, ['api']);
    started.push(wide);
    const body = unique('orphan ');
    const reply = new Client(wide.server?.info.uri ?? '').post(
      '/api/forum/posts',
      { action: 'create', projectSlug: slug, topicSlug: into.topicSlug, body },
      { token: into.owner.token, headers: { 'idempotency-key': unique('k') } },
    );
    await exited;
    // Only now a worker again, with PARTITIONS=2: it serves the queue only by finding the running job there.
    started.push(await startApp(t.settings, ['worker']));

    expect((await reply).status).toBe(200);
    expect(await t.orm.em.fork().count(Post, { body })).toBe(1);
  });
});
