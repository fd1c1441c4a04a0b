import { randomUUID } from 'node:crypto';
import { Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { readJobData, readJobFields } from '../../src/pipeline/bullmqInternals.ts';
import { until } from '../support/until.ts';

/**
 * The adapter against the installed BullMQ: jobs written and worked on by
 * BullMQ itself, read back both through the adapter and through BullMQ's own
 * parser (Job.fromId). A BullMQ that stores a field under another name or
 * elsewhere fails here, not on an operator page.
 */
const connection = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
const prefix = `bullmq-internals-${randomUUID()}`;
const queue = new Queue('layout', { connection, prefix });

afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
});

const data = { commands: [{ commandId: 'c1', partitionKey: 'project:alpha' }] };

/** A job that a named worker took and failed for good, and one nobody took yet. */
async function failedAndWaiting(): Promise<[Job, Job]> {
  const failing = await queue.add('batch alpha=1', data, { attempts: 1 });
  const worker = new Worker(
    queue.name,
    async () => {
      throw new Error('broken on purpose');
    },
    { connection: connection.duplicate(), prefix, name: 'worker-under-test' },
  );
  try {
    await until(async () => (await queue.getJobState(failing.id ?? '')) === 'failed', 10_000, 'the job failing');
  } finally {
    await worker.close();
  }
  const waiting = await queue.add('batch +1', { commands: [] });
  const read = await Promise.all([Job.fromId(queue, failing.id ?? ''), Job.fromId(queue, waiting.id ?? '')]);
  return read.map((job) => job ?? expect.unreachable('the job was written')) as [Job, Job];
}

const fieldsOf = (job: Job) => ({
  name: job.name,
  timestamp: job.timestamp,
  processedOn: job.processedOn ?? null,
  finishedOn: job.finishedOn ?? null,
  attemptsMade: job.attemptsMade,
  failedReason: job.failedReason ?? null,
  processedBy: job.processedBy ?? null,
});

describe('BullMQ job hashes read without their data', () => {
  it('reads what BullMQ itself parses, and null for a job that is gone, in one call', async () => {
    const [failed, waiting] = await failedAndWaiting();
    const read = await readJobFields(queue, [failed.id ?? '', waiting.id ?? '', 'gone']);
    expect(read).toEqual([fieldsOf(failed), fieldsOf(waiting), null]);
    // Not equal by both being empty: the failed job's every field is set.
    expect(read[0]).toMatchObject({
      name: 'batch alpha=1',
      processedOn: expect.any(Number),
      finishedOn: expect.any(Number),
      attemptsMade: 1,
      failedReason: 'broken on purpose',
      processedBy: 'worker-under-test',
    });
    expect(read[1]).toMatchObject({ processedOn: null, finishedOn: null, attemptsMade: 0, processedBy: null });
  });

  it('reads a job data as BullMQ stored it', async () => {
    const job = await queue.add('batch', data);
    const [stored, gone] = await readJobData(queue, [job.id ?? '', 'gone']);
    expect(JSON.parse(stored ?? 'null')).toEqual(data);
    expect(gone).toBeNull();
  });

  it('sends nothing for no jobs', async () => {
    expect(await readJobFields(queue, [])).toEqual([]);
    expect(await readJobData(queue, [])).toEqual([]);
  });
});
