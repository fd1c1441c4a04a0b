import { describe, expect, it } from 'vitest';
import { connectRedis, warnIfRedisMayEvict } from '../src/redis.ts';
import { createLogger } from '../src/logging/logger.ts';
import { startOwnRedis } from '../scripts/chaos/services.ts';

async function policyWarnings(evictionPolicy: string): Promise<{ policy: string | null; lines: string[] }> {
  const server = await startOwnRedis(evictionPolicy);
  const lines: string[] = [];
  const connection = connectRedis({ redisUrl: server.url, redisClusterNodes: [] }, 'policy-check');
  try {
    const policy = await warnIfRedisMayEvict(
      connection,
      createLogger({ logLevel: 'info' }, { write: (line: string) => void lines.push(line) }),
    );
    return { policy, lines };
  } finally {
    connection.disconnect();
    await server.stop();
    server.cleanUp();
  }
}

describe('Redis eviction policy at start', () => {
  it('warns in the log when Redis may evict keys', async () => {
    const { policy, lines } = await policyWarnings('allkeys-lru');
    expect(policy).toBe('allkeys-lru');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 40, maxmemoryPolicy: 'allkeys-lru' });
  });

  it('says nothing when the policy is noeviction', async () => {
    const { policy, lines } = await policyWarnings('noeviction');
    expect(policy).toBe('noeviction');
    expect(lines).toEqual([]);
  });
});
