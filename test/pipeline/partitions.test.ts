import { Queue } from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';
import { allPartitionQueueNames, partitionOf } from '../../src/pipeline/partitions.ts';
import { createProject, registerAgent, type TestAgent } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();
let owner: TestAgent;
beforeAll(async () => {
  owner = await registerAgent(t.client);
});

describe('partition queues', () => {
  it('maps a key to the same partition every time and spreads keys over all partitions', () => {
    expect(partitionOf('project:alpha', 8)).toBe(partitionOf('project:alpha', 8));
    const used = new Set(Array.from({ length: 200 }, (_, i) => partitionOf(`project:p${i}`, 8)));
    expect(used.size).toBe(8);
  });

  it('caps every partition queue at one active job across all workers', async () => {
    for (const name of allPartitionQueueNames(t.settings.partitions)) {
      const queue = new Queue(name, { connection: t.redis, prefix: t.settings.redisPrefix });
      expect(await queue.getGlobalConcurrency()).toBe(1);
      await queue.close();
    }
  });

  it('serializes concurrent writes to one project: one topic per slug, the rest refused with 409', async () => {
    const slug = await createProject(t.client, owner);
    const replies = await Promise.all(
      Array.from({ length: 12 }, () => t.client.post('/api/forum/topics', { action: 'create', projectSlug: slug, title: 'Same title' }, { token: owner.token })),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 409)).toHaveLength(11);
  });
});
