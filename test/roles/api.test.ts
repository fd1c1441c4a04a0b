import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandBatch } from '../../src/pipeline/command.ts';
import { executeBatch } from '../../workers/executeBatch.ts';
import { unique, type Reply } from '../support/client.ts';
import { newTopic, type TestTopic } from '../support/forum.ts';
import { partitionQueue } from '../support/queues.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let topic: TestTopic;

beforeAll(async () => {
  const registrar = await startTestApp();
  topic = await newTopic(registrar.client);
  await registrar.stop();
  // API only, and no worker anywhere on its prefix: what the queue holds is applied by the test itself, never announced.
  t = await startTestApp({ COMMAND_TIMEOUT_MS: '500' }, ['api']);
});
afterAll(() => t.stop());

/** The job of the project's queue that carries this command, taken off the queue. */
async function takeJobOf(carries: (batch: CommandBatch) => boolean): Promise<CommandBatch> {
  const queue = partitionQueue(t.redis, t.settings, topic.projectSlug);
  try {
    for (const job of (await queue.getJobs(['waiting'])) as Job<CommandBatch>[]) {
      if (!carries(job.data)) continue;
      await job.remove();
      return job.data;
    }
    throw new Error('no queued job carries the command');
  } finally {
    await queue.close();
  }
}

/**
 * A post whose batch a worker applied and died before its after-commit pipeline: nobody replied, announced or
 * refreshed anything. The retry with the same key finds the result in processed_command and is answered 200.
 */
async function postAnsweredFromPostgres(): Promise<Reply> {
  const key = randomUUID();
  const body = unique('unannounced ');
  const send = () =>
    t.client.post(
      '/api/forum/posts',
      { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body },
      { token: topic.owner.token, headers: { 'idempotency-key': key } },
    );
  // No worker: the first attempt is still queued when its wait ends.
  expect((await send()).status).toBe(503);
  const batch = await takeJobOf((data) => data.commands.some((command) => command.data.body === body));
  await executeBatch(t.orm.em, t.settings, batch.commands);
  const retried = await send();
  expect(retried.status).toBe(200);
  expect(retried.headers.get('idempotency-replayed')).toBe('true');
  return retried;
}

const conditionally = (path: string, query: Record<string, string>, etag?: string) =>
  t.client.get(path, query, etag ? { headers: { 'if-none-match': etag } } : {});

describe('an API answering a command from Postgres instead of its reply', () => {
  it('marks the outbox first, so its writer’s conditional events poll shows the post its batch never announced', async () => {
    const query = { projectSlug: topic.projectSlug };
    const etag = (await conditionally('/api/forum/events', query)).headers.get('etag') ?? '';
    const retried = await postAnsweredFromPostgres();
    const poll = await conditionally('/api/forum/events', query, etag);
    expect(poll.status).toBe(200);
    expect(poll.body.events.map((event: { subjectId: string }) => event.subjectId)).toContain(retried.body.post.id);
  });

  it('refreshes the ETags the command changed first, so a conditional read of its topic’s posts shows the post', async () => {
    const query = { projectSlug: topic.projectSlug, topicSlug: topic.topicSlug };
    const etag = (await conditionally('/api/forum/posts', query)).headers.get('etag') ?? '';
    const retried = await postAnsweredFromPostgres();
    const listed = await conditionally('/api/forum/posts', query, etag);
    expect(listed.status).toBe(200);
    expect(listed.body.posts.map((post: { id: string }) => post.id)).toContain(retried.body.post.id);
  });
});
