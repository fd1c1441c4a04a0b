import { Queue } from 'bullmq';
import { projectKey } from '../../src/pipeline/batchName.ts';
import { allPartitionQueueNames, MAX_PARTITIONS, partitionOf, partitionQueueName } from '../../src/pipeline/partitions.ts';
import type { Settings } from '../../config/settings.ts';
import { queuePrefix, type RedisClient } from '../../src/redis.ts';

type QueueSettings = Pick<Settings, 'redisPrefix' | 'redisClusterNodes'>;

/** The partition queue a project's commands go to (the caller closes it). */
export function partitionQueue(redis: RedisClient, settings: QueueSettings & Pick<Settings, 'partitions'>, slug: string): Queue {
  return new Queue(partitionQueueName(partitionOf(projectKey(slug), settings.partitions)), {
    connection: redis,
    prefix: queuePrefix(settings),
  });
}

/**
 * Reads something of each named partition queue of a service, then lets the queues go.
 * On a Redis Cluster their prefix is hash-tagged as the service's (queuePrefix), or BullMQ's scripts
 * would reach keys on other nodes.
 */
async function eachQueue<T>(
  redis: RedisClient,
  settings: QueueSettings,
  names: string[],
  read: (queue: Queue) => Promise<T>,
): Promise<T[]> {
  const queues = names.map((name) => new Queue(name, { connection: redis, prefix: queuePrefix(settings) }));
  try {
    return await Promise.all(queues.map(read));
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
  }
}

/** True once no partition queue (of all MAX_PARTITIONS) holds a job that is waiting, delayed or running. */
export async function queuesIdle(redis: RedisClient, settings: QueueSettings): Promise<boolean> {
  const counts = await eachQueue(redis, settings, allPartitionQueueNames(MAX_PARTITIONS), (queue) =>
    queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
  );
  return counts.every((count) => Object.values(count).every((n) => n === 0));
}

/** How many worker processes listen on the partition queue `name` (BullMQ names its connections). */
export async function workersOn(redis: RedisClient, settings: QueueSettings, name: string): Promise<number> {
  const [count] = await eachQueue(redis, settings, [name], (queue) => queue.getWorkersCount());
  return count ?? 0;
}

/** How many worker processes listen on each of the first `partitions` queues, at the least (BullMQ names its connections). */
export async function workersListening(redis: RedisClient, settings: QueueSettings, partitions: number): Promise<number> {
  return Math.min(...(await eachQueue(redis, settings, allPartitionQueueNames(partitions), (queue) => queue.getWorkersCount())));
}
