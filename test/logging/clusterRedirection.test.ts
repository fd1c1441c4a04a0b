import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCluster } from '../../scripts/topology/redisCluster.ts';
import { outageOf } from '../../src/logging/outages.ts';

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await RedisCluster.start();
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

describe('a Redis Cluster redirection that reaches the service', () => {
  it('is classified as a Redis outage, as CLUSTERDOWN is (the HTTP tier answers those 503), not as a bug', async () => {
    const owner = cluster.masterOf('some-key');
    const other = cluster.nodes.find((node) => node.port !== owner.port && node.pid !== undefined);
    // A plain connection to a node that does not serve the key: Redis answers MOVED, as a node does while slots move in a failover.
    const plain = new Redis(other?.port as number, { maxRetriesPerRequest: 0 });
    try {
      const error = await plain.get('some-key').then(
        () => null,
        (cause: Error) => cause,
      );
      expect(error?.message).toMatch(/^MOVED \d+ 127\.0\.0\.1:\d+$/);
      expect(outageOf(error)).toBe('redis');
    } finally {
      plain.disconnect();
    }
  });
});
