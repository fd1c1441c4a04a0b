import type { Queue } from 'bullmq';
import type { RedisClient } from '../redis.ts';

/**
 * The one place that reads BullMQ's Redis layout instead of its API, where
 * the API has no door of the right cost: Queue.getJobs and Job.fromId read
 * every job's whole hash, data included (up to a hundred kilobytes a job),
 * and an operator page looks at a thousand jobs per queue. The names below
 * are those BullMQ's own parser reads (Job.fromJSON); an upgrade that moves
 * one fails test/pipeline/bullmqInternals.test.ts, which writes real jobs
 * through a real Queue and Worker and reads them back here.
 */

/** A job's fields as BullMQ stores them, without its data. */
export interface JobFields {
  name: string;
  /** Epoch milliseconds: when it was added, when a worker last took it, when it finished. */
  timestamp: number;
  processedOn: number | null;
  finishedOn: number | null;
  attemptsMade: number;
  failedReason: string | null;
  /** The name of the worker that took it (its processedBy), when workers carry one. */
  processedBy: string | null;
}

const FIELDS = ['name', 'timestamp', 'processedOn', 'finishedOn', 'atm', 'failedReason', 'pb'] as const;

const numberOrNull = (text: string | null | undefined) => (text ? Number(text) : null);

/** BullMQ types its backend's client with the few methods it uses itself; it is the ioredis connection the queue was given. */
async function clientOf(queue: Queue): Promise<RedisClient> {
  return (await queue.getBackend().client) as unknown as RedisClient;
}

/** Each job's fields, null for a job that is gone (removed after its id was read), in one round trip. */
export async function readJobFields(queue: Queue, ids: readonly string[]): Promise<(JobFields | null)[]> {
  if (ids.length === 0) return [];
  const pipeline = (await clientOf(queue)).pipeline();
  for (const id of ids) pipeline.hmget(queue.toKey(id), ...FIELDS);
  const replies = (await pipeline.exec()) ?? [];
  return ids.map((_id, i) => {
    const [error, values] = replies[i] ?? [];
    if (error) throw error;
    const [name, timestamp, processedOn, finishedOn, attempts, failedReason, worker] = values as (string | null)[];
    if (timestamp === null || timestamp === undefined) return null;
    return {
      name: name ?? '',
      timestamp: Number(timestamp),
      processedOn: numberOrNull(processedOn),
      finishedOn: numberOrNull(finishedOn),
      attemptsMade: Number(attempts ?? 0),
      failedReason: failedReason ?? null,
      processedBy: worker ?? null,
    };
  });
}

/** Each job's data as BullMQ stored it (JSON text), null for a job that is gone, in one round trip. */
export async function readJobData(queue: Queue, ids: readonly string[]): Promise<(string | null)[]> {
  if (ids.length === 0) return [];
  const pipeline = (await clientOf(queue)).pipeline();
  for (const id of ids) pipeline.hget(queue.toKey(id), 'data');
  const replies = (await pipeline.exec()) ?? [];
  return ids.map((_id, i) => {
    const [error, data] = replies[i] ?? [];
    if (error) throw error;
    return (data as string | null) ?? null;
  });
}
