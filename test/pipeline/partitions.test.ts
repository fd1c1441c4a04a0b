import { Queue } from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';
import { allPartitionQueueNames, partitionOf } from '../../src/pipeline/partitions.ts';
import { createProject, registerAgent, type TestAgent } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();

/** 32-bit FNV-1a over the UTF-8 bytes, in BigInt arithmetic: independent of the service's Math.imul version. */
function fnv1a(key: string): number {
  let hash = 0x811c9dc5n;
  for (const byte of Buffer.from(key, 'utf8')) hash = ((hash ^ BigInt(byte)) * 0x01000193n) & 0xffffffffn;
  return Number(hash);
}
let owner: TestAgent;
beforeAll(async () => {
  owner = await registerAgent(t.client);
});

describe('partition queues', () => {
  it('maps a key to the partition its 32-bit FNV-1a hash names, the same in every process', () => {
    // Published FNV-1a test vectors (www.isthe.com/chongo/tech/comp/fnv): every API and worker process must agree on them.
    expect(partitionOf('', 1_000_003)).toBe(0x811c9dc5 % 1_000_003);
    expect(partitionOf('a', 1_000_003)).toBe(0xe40c292c % 1_000_003);
    expect(partitionOf('foobar', 1_000_003)).toBe(0xbf9cf968 % 1_000_003);
    // And for keys as the service forms them, against an FNV-1a written here over the key's bytes.
    for (const key of ['project:alpha', 'project:demo', 'agent:agt_01jz3k5m7q9s1v3x5z7b9d1f3h']) {
      for (const partitions of [1, 2, 8, 256]) expect(partitionOf(key, partitions)).toBe(fnv1a(key) % partitions);
    }
  });

  it('spreads project keys over every partition, none taking more than twice its share', () => {
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 800; i++) counts[partitionOf(`project:p${i}`, 8)]! += 1;
    expect(Math.min(...counts)).toBeGreaterThan(0);
    expect(Math.max(...counts)).toBeLessThanOrEqual(200);
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
      Array.from({ length: 12 }, () =>
        t.client.post('/api/forum/topics', { action: 'create', projectSlug: slug, title: 'Same title' }, { token: owner.token }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 409)).toHaveLength(11);
  });
});
