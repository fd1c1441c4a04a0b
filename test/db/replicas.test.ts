import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CommandBatch } from '../../src/pipeline/command.ts';
import { executeBatch } from '../../workers/executeBatch.ts';
import { createProject, registerAgent, unique, type Client, type TestAgent } from '../support/client.ts';
import { createPost, createTopic } from '../support/forum.ts';
import { partitionQueue } from '../support/queues.ts';
import { startStreamingPair, type StreamingPair } from '../support/replica.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

/**
 * Reads on a real streaming replica (pg_basebackup -R of a primary of our
 * own). Which server answered is told by state: with replay paused, a
 * change made on the primary is visible there and not on the replica.
 * Changes "outside the service" are SQL on the primary: they move no ETag
 * fingerprint and no agent's commit position, so only the replica choice
 * decides whether a read sees them.
 */
const DATABASE = 'agora_replicas';
/** Long enough that a paused replica stays eligible through a test, unless a test says otherwise. */
const GENEROUS_LAG_MS = '60000';

let pair: StreamingPair;
/** API and worker. */
let first: TestApp;
/** A second API instance on the same Redis prefix and database. */
let second: TestApp;
let paused = false;

beforeAll(async () => {
  pair = await startStreamingPair();
  const env = {
    DATABASE_URL: pair.primaryUrl(DATABASE),
    DATABASE_REPLICA_URLS: pair.replicaUrl(DATABASE),
    REPLICA_MAX_LAG_MS: GENEROUS_LAG_MS,
  };
  // The app creates and migrates the database on the primary; the replica receives it by streaming.
  first = await startTestApp(env);
  second = await startTestApp({ ...env, REDIS_PREFIX: first.settings.redisPrefix }, ['api']);
  await pair.sql('primary', 'create extension pg_stat_statements', DATABASE);
}, 120_000);

afterAll(async () => {
  // The primary and the replica go whatever happens to the apps' teardown: they must not outlive the run.
  try {
    await second?.stop();
    await first?.stop();
  } finally {
    await pair?.stop();
  }
});

afterEach(async () => {
  if (paused) await pair.resumeReplay();
  paused = false;
});

async function pauseReplay(): Promise<void> {
  await pair.pauseReplay();
  paused = true;
}

/** The replica has replayed everything, and every API instance's poll (every 100 ms) has seen it. */
async function replicaCaughtUp(): Promise<void> {
  await pair.caughtUp();
  await new Promise((resolve) => setTimeout(resolve, 400));
}

async function renameOutsideTheService(slug: string): Promise<string> {
  const name = unique('Renamed ');
  await first.orm.em.fork().execute('update project set name = ? where slug = ?', [name, slug]);
  return name;
}

async function projectName(client: Client, slug: string, reader?: TestAgent): Promise<string> {
  const reply = await client.get('/api/forum/projects', { slug }, reader ? { token: reader.token } : {});
  expect(reply.status).toBe(200);
  return reply.body.projects[0].name;
}

async function ownerWithProject(): Promise<{ owner: TestAgent; slug: string }> {
  const owner = await registerAgent(first.client);
  return { owner, slug: await createProject(first.client, owner) };
}

describe('reads on a streaming replica', () => {
  it('serves an anonymous read from the replica', async () => {
    const { slug } = await ownerWithProject();
    await replicaCaughtUp();
    await pauseReplay();
    const renamed = await renameOutsideTheService(slug);

    expect(await projectName(first.client, slug)).toBe(`Project ${slug}`);
    expect(await projectName(second.client, slug)).toBe(`Project ${slug}`);
    // The primary has the change: the answers above came from the paused replica.
    expect(await pair.sql('primary', `select name from project where slug = '${slug}'`, DATABASE)).toBe(renamed);
  });

  it('with replay paused, the agent that wrote reads its own write at once, from either API instance', async () => {
    const { owner, slug } = await ownerWithProject();
    await replicaCaughtUp();
    await pauseReplay();
    const topic = await createTopic(first.client, owner, slug);
    const renamed = await renameOutsideTheService(slug);

    for (const app of [first, second]) {
      const topics = await app.client.get('/api/forum/topics', { projectSlug: slug }, { token: owner.token });
      expect(topics.status).toBe(200);
      expect(topics.body.topics.map((t: { id: string }) => t.id)).toEqual([topic.topicId]);
      // Any read of the agent goes to the primary until a replica has replayed its write, not only reads of what it wrote.
      expect(await projectName(app.client, slug, owner)).toBe(renamed);
    }
    // Meanwhile an anonymous reader of an untouched scope is still served by the replica, which lacks the topic.
    expect(await projectName(second.client, slug)).toBe(`Project ${slug}`);
    expect(await pair.sql('replica', `select count(*) from topic where id = '${topic.topicId}'`, DATABASE)).toBe('0');
  });

  it('with replay paused, an agent whose write was answered from Postgres, not by its worker, reads it at once', async () => {
    // An API instance with no worker on its prefix: its command waits out COMMAND_TIMEOUT_MS in the queue, the test
    // applies it, and the retry is answered from processed_command (src/roles/api.ts, findAndRefresh).
    const lone = await startTestApp(
      {
        DATABASE_URL: pair.primaryUrl(DATABASE),
        DATABASE_REPLICA_URLS: pair.replicaUrl(DATABASE),
        REPLICA_MAX_LAG_MS: GENEROUS_LAG_MS,
        COMMAND_TIMEOUT_MS: '500',
      },
      ['api'],
    );
    try {
      const { owner, slug } = await ownerWithProject();
      await replicaCaughtUp();
      await pauseReplay();
      const key = randomUUID();
      const topicSlug = unique('t-');
      const send = () =>
        lone.client.post(
          '/api/forum/topics',
          { action: 'create', projectSlug: slug, topicSlug, title: `Topic ${topicSlug}` },
          { token: owner.token, headers: { 'idempotency-key': key } },
        );
      expect((await send()).status).toBe(503);
      const queue = partitionQueue(lone.redis, lone.settings, slug);
      const [job] = (await queue.getJobs(['waiting'])) as Job<CommandBatch>[];
      await queue.close();
      if (!job) throw new Error('the command is not in its queue');
      await executeBatch(lone.orm.em, lone.settings, job.data.commands);
      expect((await send()).status).toBe(200);
      const renamed = await renameOutsideTheService(slug);

      // Not a read of what it wrote (the project is no scope of a topic's): only its commit position sends it to the primary.
      expect(await projectName(lone.client, slug, owner)).toBe(renamed);
      expect(await projectName(lone.client, slug)).toBe(`Project ${slug}`);
    } finally {
      await lone.stop();
    }
  });

  it('never pairs an ETag with a body older than the commits behind it', async () => {
    const { owner, slug } = await ownerWithProject();
    const topic = await createTopic(first.client, owner, slug);
    await replicaCaughtUp();
    const before = await second.client.get('/api/forum/posts', { projectSlug: slug });
    await pauseReplay();
    const post = await createPost(first.client, owner, topic);

    // Another reader, with the ETag of the state before: the new fingerprint names a commit the replica lacks, so the primary answers.
    const after = await second.client.get(
      '/api/forum/posts',
      { projectSlug: slug },
      { headers: { 'if-none-match': before.headers.get('etag') ?? '' } },
    );
    expect(after.status).toBe(200);
    expect(after.body.posts.map((p: { id: string }) => p.id)).toEqual([post.id]);
    const again = await second.client.get(
      '/api/forum/posts',
      { projectSlug: slug },
      { headers: { 'if-none-match': after.headers.get('etag') ?? '' } },
    );
    expect(again.status).toBe(304);
  });

  it('serves the agent from the replica again once replay has passed its write', async () => {
    const { owner, slug } = await ownerWithProject();
    await pauseReplay();
    await createTopic(first.client, owner, slug);
    await pair.resumeReplay();
    paused = false;
    await replicaCaughtUp();

    await pauseReplay();
    await renameOutsideTheService(slug);
    for (const app of [first, second]) expect(await projectName(app.client, slug, owner)).toBe(`Project ${slug}`);
  });

  it('skips a replica that lags past REPLICA_MAX_LAG_MS', async () => {
    const strict = await startTestApp(
      {
        DATABASE_URL: pair.primaryUrl(DATABASE),
        DATABASE_REPLICA_URLS: pair.replicaUrl(DATABASE),
        REPLICA_MAX_LAG_MS: '300',
        REDIS_PREFIX: first.settings.redisPrefix,
      },
      ['api'],
    );
    try {
      const { slug } = await ownerWithProject();
      await replicaCaughtUp();
      await pauseReplay();
      const renamed = await renameOutsideTheService(slug);
      await new Promise((resolve) => setTimeout(resolve, 1000));

      expect(await projectName(strict.client, slug)).toBe(renamed);
      // The instance with a generous bound still reads the paused replica.
      expect(await projectName(second.client, slug)).toBe(`Project ${slug}`);
    } finally {
      // Not strict.stop(): that deletes every key of the shared prefix, which the other instances still use.
      await strict.app.stop();
      await strict.orm.close();
      await strict.redis.quit();
    }
  });

  it('asks Postgres for one commit position per batch, not per command', async () => {
    const { owner, slug } = await ownerWithProject();
    const topic = await createTopic(first.client, owner, slug);
    await pair.sql('primary', 'select pg_stat_statements_reset()', DATABASE);
    const posts = await Promise.all(Array.from({ length: 16 }, () => createPost(first.client, owner, topic)));
    expect(new Set(posts.map((p) => p.id)).size).toBe(16);

    const calls = async (fragment: string) =>
      Number(
        await pair.sql(
          'primary',
          'select coalesce(sum(calls), 0) from pg_stat_statements where dbid = (select oid from pg_database where ' +
            `datname = current_database()) and query like '%${fragment}%'`,
          DATABASE,
        ),
      );
    const positions = await calls('pg_current_wal_lsn()');
    // Every batch transaction takes its partition locks in exactly one statement.
    const batches = await calls('pg_advisory_xact_lock(hashtext(k))');
    console.log(`16 commands: ${batches} batch transactions, ${positions} commit-position statements`);
    expect(positions).toBe(batches);
    expect(batches).toBeLessThan(16);
  });

  it('skips a stopped replica: reads still answer 200 with fresh data, never 5xx', async () => {
    const { owner, slug } = await ownerWithProject();
    await replicaCaughtUp();
    await pair.stopReplica();
    const renamed = await renameOutsideTheService(slug);

    // At once (before a poll has noticed, a read fails on the replica and runs again on the primary) and after.
    for (let i = 0; i < 10; i++) {
      for (const app of [first, second]) {
        expect(await projectName(app.client, slug)).toBe(renamed);
        expect(await projectName(app.client, slug, owner)).toBe(renamed);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const topic = await createTopic(first.client, owner, slug);
    const topics = await second.client.get('/api/forum/topics', { projectSlug: slug });
    expect({ status: topics.status, ids: topics.body.topics.map((t: { id: string }) => t.id) }).toEqual({
      status: 200,
      ids: [topic.topicId],
    });
  });
});
