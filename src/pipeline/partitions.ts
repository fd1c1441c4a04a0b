import type { Queue } from 'bullmq';

/**
 * A worker process serves its own first PARTITIONS queues and any other of
 * the MAX_PARTITIONS it finds holding a job (workers/unservedQueues.ts). So
 * changing PARTITIONS, or the number of worker processes, needs no drain:
 * jobs an API enqueued under another count stay served, and a project
 * whose commands sit in two queues during the change still has them
 * applied one batch at a time, because every batch transaction takes its
 * projects' advisory locks first
 * (workers/batchTransaction.ts).
 */
export { MAX_PARTITIONS } from '../../config/settings.ts';

/**
 * A partition key (project slug, or agent for commands outside projects)
 * maps to one of the API's `partitions` queues by FNV-1a, and each queue
 * runs one job at a time across all workers, so the mutations of one project
 * are serialized while other partitions run in parallel.
 */
export function partitionOf(key: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}

export function partitionQueueName(index: number): string {
  return `commands-${index}`;
}

export function allPartitionQueueNames(partitions: number): string[] {
  return Array.from({ length: partitions }, (_, i) => partitionQueueName(i));
}

/** Job counts per partition queue (waiting, active, delayed, failed, completed), for operators. */
export async function queueCounts(queues: Queue[]): Promise<Record<string, Record<string, number>>> {
  const entries = await Promise.all(
    queues.map(async (q) => [q.name, await q.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed')] as const),
  );
  return Object.fromEntries(entries);
}
