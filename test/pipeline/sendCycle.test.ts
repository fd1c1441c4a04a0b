import type { Job } from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CommandBatch } from '../../src/pipeline/command.ts';
import { projectKey } from '../../src/pipeline/batchName.ts';
import { partitionOf } from '../../src/pipeline/partitions.ts';
import { LOADED_BATCH } from '../../src/pipeline/sendCycle.ts';
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
/** A topic whose project is on the other partition queue. */
let elsewhere: TestTopic;
let authors: TestAgent[];
const partition = (slug: string) => partitionOf(projectKey(slug), t.settings.partitions);
beforeAll(async () => {
  topic = await newTopic(t.client);
  do elsewhere = await newTopic(t.client);
  while (partition(elsewhere.projectSlug) === partition(topic.projectSlug));
  authors = await Promise.all(Array.from({ length: 5 }, () => registerAgent(t.client)));
});

const post = (author: TestAgent, body: string, into = topic) =>
  t.client.post(
    '/api/forum/posts',
    { action: 'create', projectSlug: into.projectSlug, topicSlug: into.topicSlug, body },
    { token: author.token },
  );

/** The jobs of a project's partition queue in these states. */
async function jobsIn(states: ('waiting' | 'completed')[], slug = topic.projectSlug): Promise<Job<CommandBatch>[]> {
  const queue = partitionQueue(t.redis, t.settings, slug);
  try {
    return (await queue.getJobs(states)) as Job<CommandBatch>[];
  } finally {
    await queue.close();
  }
}
const carries = (job: Job<CommandBatch>, body: string) => job.data.commands.some((c) => c.data.body === body);

/** How many commands the job that carried the post with this body carried (its reply can precede its completion). */
async function batchSizeOf(body: string, slug = topic.projectSlug): Promise<number> {
  let job: Job<CommandBatch> | undefined;
  const found = async () => {
    job = (await jobsIn(['completed'], slug)).find((j) => carries(j, body));
    return job !== undefined;
  };
  await until(found, 5_000, `a completed job to carry "${body}"`);
  return job?.data.commands.length ?? 0;
}

/** Holds the topic owner's row: a batch with a post of the owner waits for it until `release`. */
async function holdOwner(): Promise<{ blocked: () => Promise<boolean>; release: () => Promise<void> }> {
  const holder = t.orm.em.fork();
  await beginHeld(holder);
  await holder.execute('select 1 from agent where id = ? for update', [topic.owner.agentId]);
  const [{ pid } = { pid: 0 }] = await holder.execute<{ pid: number }[]>('select pg_backend_pid() as pid');
  const blocked = async () => {
    const [row] = await t.orm.em
      .fork()
      .execute<{ n: number }[]>('select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [pid]);
    return (row?.n ?? 0) > 0;
  };
  return { blocked, release: () => holder.rollback() };
}

/**
 * Once any linger of an earlier scenario has lapsed: one post alone (a batch of one) that the worker cannot finish
 * while the test holds its author's row, then `count` posts that gather meanwhile and wait, as one job, behind it.
 * Calls `meanwhile` while they wait, then answers when all have been answered, the gathered batch last.
 */
async function answerBatchOf(count: number, meanwhile?: (stillBlocked: () => Promise<boolean>) => Promise<void>): Promise<void> {
  await pause(LINGER_MS);
  const { blocked, release } = await holdOwner();
  const alone = post(topic.owner, unique('alone '));
  await until(blocked, 10_000, 'the first batch to wait for the held author');
  const bodies = Array.from({ length: count }, () => unique('gathered '));
  const gathered = bodies.map((body, i) => post(authors[i % authors.length] as TestAgent, body));
  // The lane sends what gathered once it has been held MAX_HOLD_MS, and the job waits behind the blocked one.
  const waitingAsOne = async () => (await jobsIn(['waiting'])).some((job) => bodies.every((body) => carries(job, body)));
  await until(waitingAsOne, 10_000, `the ${count} posts to wait as one job`);
  await meanwhile?.(blocked);
  await release();
  const replies = await Promise.all([alone, ...gathered]);
  expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
}

describe('the partition lanes after a batch is answered', () => {
  it('holds the next commands of a loaded batch for the linger, and sends them as one job', async () => {
    await answerBatchOf(LOADED_BATCH);
    const bodies = Array.from({ length: LOADED_BATCH }, () => unique('next '));
    // One by one, each after the last was handed over: without the linger the first would leave alone.
    const replies = [];
    for (const [i, body] of bodies.entries()) {
      replies.push(post(authors[i % authors.length] as TestAgent, body));
      await pause(20);
    }
    expect((await Promise.all(replies)).map((r) => r.status)).toEqual(bodies.map(() => 200));
    expect(await Promise.all(bodies.map((body) => batchSizeOf(body)))).toEqual(bodies.map(() => LOADED_BATCH));
  });

  it('ends the linger as soon as as many commands are held as at the busiest moment of the last cycles', async () => {
    // The busiest moment: the post alone, unanswered, and the batch gathered behind it.
    await answerBatchOf(LOADED_BATCH);
    const answered = performance.now();
    const bodies = Array.from({ length: LOADED_BATCH + 1 }, () => unique('back '));
    const replies = [];
    for (const [i, body] of bodies.entries()) {
      replies.push(post(authors[i % authors.length] as TestAgent, body));
      await pause(20);
    }
    expect((await Promise.all(replies)).map((r) => r.status)).toEqual(bodies.map(() => 200));
    expect(performance.now() - answered).toBeLessThan(LINGER_MS / 2);
    expect(await Promise.all(bodies.map((body) => batchSizeOf(body)))).toEqual(bodies.map(() => LOADED_BATCH + 1));
  });

  it('holds the next commands of every lane after a loaded batch, and sends each lane its own as one job', async () => {
    expect(t.settings.partitions).toBe(2);
    await answerBatchOf(LOADED_BATCH);
    const sent = Array.from({ length: LOADED_BATCH }, (_, i) => ({ body: unique('lane '), into: i % 2 === 0 ? topic : elsewhere }));
    // Alternating between the two lanes: with a linger of its own, the other lane would send its first post alone.
    const replies = [];
    for (const [i, { body, into }] of sent.entries()) {
      replies.push(post(authors[i % authors.length] as TestAgent, body, into));
      await pause(20);
    }
    expect((await Promise.all(replies)).map((r) => r.status)).toEqual(sent.map(() => 200));
    const sizes = await Promise.all(sent.map(({ body, into }) => batchSizeOf(body, into.projectSlug)));
    expect(sizes).toEqual(sent.map(() => LOADED_BATCH / 2));
  });

  it('answers a command of another lane while a lane of a loaded cycle is blocked', async () => {
    await answerBatchOf(LOADED_BATCH, async (stillBlocked) => {
      const reply = await post(authors[0] as TestAgent, unique('other lane '), elsewhere);
      expect(reply.status).toBe(200);
      expect(await stillBlocked()).toBe(true);
    });
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
