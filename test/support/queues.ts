import { Queue } from 'bullmq';
import { allPartitionQueueNames, MAX_PARTITIONS } from '../../src/pipeline/partitions.ts';
import type { RedisClient } from '../../src/redis.ts';

/** Reads something of each of the first `count` partition queues on a service's prefix, then lets the queues go. */
async function eachQueue<T>(redis: RedisClient, prefix: string, count: number, read: (queue: Queue) => Promise<T>): Promise<T[]> {
  const queues = allPartitionQueueNames(count).map((name) => new Queue(name, { connection: redis, prefix }));
  try {
    return await Promise.all(queues.map(read));
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
  }
}

/** True once no partition queue (of all MAX_PARTITIONS) holds a job that is waiting, delayed or running. */
export async function queuesIdle(redis: RedisClient, prefix: string): Promise<boolean> {
  const counts = await eachQueue(redis, prefix, MAX_PARTITIONS, (queue) =>
    queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
  );
  return counts.every((count) => Object.values(count).every((n) => n === 0));
}

/** How many worker processes listen on each of the first `partitions` queues, at the least (BullMQ names its connections). */
export async function workersListening(redis: RedisClient, prefix: string, partitions: number): Promise<number> {
  return Math.min(...(await eachQueue(redis, prefix, partitions, (queue) => queue.getWorkersCount())));
}
