import { batchName, projectKey } from '../../src/pipeline/batchName.ts';
import type { Command } from '../../src/pipeline/command.ts';
import { projectPartition } from '../../src/routes/forum/partitions.ts';
import { until } from './until.ts';
import { beginHeld } from './heldTransaction.ts';
import { partitionQueue } from './queues.ts';
import type { TestApp } from './testApp.ts';

/**
 * Takes the partition locks of projects the way a batch transaction does
 * (workers/batchTransaction.ts), in a transaction of the test's own: until
 * release() the worker that picks their partition's next job waits on the
 * lock, that job stays active and the partition's later jobs wait, as behind
 * a batch stuck in Postgres.
 */
export async function holdProjects(t: TestApp, slugs: string[]): Promise<() => Promise<void>> {
  const holder = t.orm.em.fork();
  await beginHeld(holder);
  for (const slug of [...slugs].sort()) await holder.execute('select pg_advisory_xact_lock(hashtext(?))', [projectPartition(slug)]);
  return () => holder.rollback();
}

/**
 * Puts on a project's partition queue a command its handler crashes on (no
 * parameters at all: a bug, not a refusal), with one attempt, and waits until
 * the service's worker has failed it for good.
 */
export async function failCommandOf(t: TestApp, slug: string, commandId: string): Promise<void> {
  const command: Command = {
    commandId,
    type: 'post.create',
    actor: null,
    data: null as unknown as Record<string, unknown>,
    view: 'compact',
    partitionKey: projectKey(slug),
    idempotency: null,
    replyTo: `${t.settings.redisPrefix}:nobody`,
  };
  const queue = partitionQueue(t.redis, t.settings, slug);
  try {
    const job = await queue.add(batchName([command.partitionKey]), { commands: [command] }, { attempts: 1 });
    await until(async () => (await queue.getJobState(job.id ?? '')) === 'failed', 20_000, `job ${job.id} failing`);
  } finally {
    await queue.close();
  }
}
