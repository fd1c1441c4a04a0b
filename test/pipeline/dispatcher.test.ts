import type { Job } from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CommandBatch } from '../../src/pipeline/command.ts';
import { LOADED_BATCH } from '../../src/pipeline/dispatcher.ts';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { newTopic, type TestTopic } from '../support/forum.ts';
import { beginHeld } from '../support/heldTransaction.ts';
import { partitionQueue } from '../support/queues.ts';
import { useTestApp } from '../support/testApp.ts';
import { until } from '../support/until.ts';

// A linger far longer than a request takes here, so that whether a command waited for it shows.
const LINGER_MS = 1000;
const t = useTestApp({ BATCH_LINGER_MS: String(LINGER_MS) });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let topic: TestTopic;
let authors: TestAgent[];
beforeAll(async () => {
  topic = await newTopic(t.client);
  authors = await Promise.all(Array.from({ length: 5 }, () => registerAgent(t.client)));
});

const post = (author: TestAgent, body: string) =>
  t.client.post(
    '/api/forum/posts',
    { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body },
    { token: author.token },
  );

/** The jobs of the project's partition queue in these states. */
async function jobsIn(states: ('waiting' | 'completed')[]): Promise<Job<CommandBatch>[]> {
  const queue = partitionQueue(t.redis, t.settings, topic.projectSlug);
  try {
    return (await queue.getJobs(states)) as Job<CommandBatch>[];
  } finally {
    await queue.close();
  }
}
const carries = (job: Job<CommandBatch>, body: string) => job.data.commands.some((c) => c.data.body === body);

/** How many commands the job that carried the post with this body carried. */
async function batchSizeOf(body: string): Promise<number> {
  const job = (await jobsIn(['completed'])).find((j) => carries(j, body));
  if (!job) throw new Error(`no completed job carries "${body}"`);
  return job.data.commands.length;
}

/**
 * Once any linger of an earlier scenario has lapsed: one post alone (a batch of one) that the worker cannot finish
 * while the test holds its author's row, then `count` posts that gather meanwhile and wait, as one job, behind it.
 * Answers when all have been answered, the gathered batch last.
 */
async function answerBatchOf(count: number): Promise<void> {
  await pause(LINGER_MS);
  const holder = t.orm.em.fork();
  await beginHeld(holder);
  await holder.execute('select 1 from agent where id = ? for update', [topic.owner.agentId]);
  const [{ pid } = { pid: 0 }] = await holder.execute<{ pid: number }[]>('select pg_backend_pid() as pid');
  const alone = post(topic.owner, unique('alone '));
  const blocked = async () => {
    const [row] = await t.orm.em
      .fork()
      .execute<{ n: number }[]>('select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [pid]);
    return (row?.n ?? 0) > 0;
  };
  await until(blocked, 10_000, 'the first batch to wait for the held author');
  const bodies = Array.from({ length: count }, () => unique('gathered '));
  const gathered = bodies.map((body, i) => post(authors[i % authors.length] as TestAgent, body));
  // The lane sends what gathered once it has been held MAX_HOLD_MS, and the job waits behind the blocked one.
  const waitingAsOne = async () => (await jobsIn(['waiting'])).some((job) => bodies.every((body) => carries(job, body)));
  await until(waitingAsOne, 10_000, `the ${count} posts to wait as one job`);
  await holder.rollback();
  const replies = await Promise.all([alone, ...gathered]);
  expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
}

describe('a partition lane after its batch is answered', () => {
  it('holds the next commands of a loaded batch until as many have come, and sends them as one job', async () => {
    await answerBatchOf(LOADED_BATCH);
    const bodies = Array.from({ length: LOADED_BATCH }, () => unique('next '));
    // One by one, each after the last was handed over: without the linger the first would leave alone.
    const replies = [];
    for (const [i, body] of bodies.entries()) {
      replies.push(post(authors[i % authors.length] as TestAgent, body));
      await pause(20);
    }
    expect((await Promise.all(replies)).map((r) => r.status)).toEqual(bodies.map(() => 200));
    expect(await Promise.all(bodies.map(batchSizeOf))).toEqual(bodies.map(() => LOADED_BATCH));
  });

  it('sends the command after a small batch at once, without lingering', async () => {
    await answerBatchOf(LOADED_BATCH - 1);
    // Timed from the small batch's answer: a linger would have begun just before it.
    const answered = performance.now();
    const reply = await post(topic.owner, unique('after small '));
    expect(reply.status).toBe(200);
    expect(performance.now() - answered).toBeLessThan(LINGER_MS / 2);
  });

  // The linger's end, not its start: without any linger the post would also leave alone.
  it('sends what came within the linger when fewer than the batch came back', async () => {
    await answerBatchOf(LOADED_BATCH);
    const body = unique('late alone ');
    const reply = await post(topic.owner, body);
    expect(reply.status).toBe(200);
    expect(await batchSizeOf(body)).toBe(1);
  });
});
