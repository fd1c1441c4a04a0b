import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Cluster } from 'ioredis';
import { redisKeys } from '../../src/redis.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface KeeperState {
  keeper: number;
  baseUrl: string;
  env: Record<string, string>;
  restartedAt?: number;
}

const readState = (env: NodeJS.ProcessEnv) =>
  JSON.parse(readFileSync(join(resolve(env.TOPOLOGY_DIR ?? '.topology'), 'state.json'), 'utf8')) as KeeperState;

/**
 * What Redis derives from the database and a restore makes false: each read scope's ETag fingerprint (a client
 * holding an ETag of the lost history would be told 304, nothing changed) and each agent's last commit position
 * (a WAL position of the old timeline, which a replica read would wait for), and the cached credentials (a
 * token issued after T, or revoked after T, would still be taken as it was). All are rebuilt on the next read.
 * Retry keys stay: a write after T retried with its key is answered as it was, though the restore took it away
 * (docs/operations.md says what to tell clients).
 */
async function forgetDerivedKeys(state: KeeperState): Promise<number> {
  const keys = redisKeys(state.env.REDIS_PREFIX ?? 'agora');
  const seeds = (state.env.REDIS_CLUSTER_NODES ?? '').split(',').filter(Boolean);
  const cluster = new Cluster(
    seeds.map((seed) => ({ host: seed.split(':')[0], port: Number(seed.split(':')[1]) })),
    { lazyConnect: true },
  );
  let removed = 0;
  try {
    await cluster.connect();
    for (const node of cluster.nodes('master')) {
      for (const pattern of [keys.etagScope('*'), keys.commitPosition('*'), keys.credential('*')]) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          for (const key of keys) removed += await node.del(key);
        } while (cursor !== '0');
      }
    }
  } finally {
    cluster.disconnect();
  }
  return removed;
}

/**
 * After a restore: the derived Redis keys removed, then the APIs and workers restarted one at a time by the
 * keeper (SIGHUP, scripts/topology.ts): their in-memory caches (rendered and immutable reads, events pages kept
 * by address) hold bodies of the history the restore took away.
 */
export async function refreshServices(say: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const before = readState(env);
  const removed = await forgetDerivedKeys(before);
  say(`restore: ${removed} ETag fingerprints, commit positions and cached credentials removed from Redis`);
  process.kill(before.keeper, 'SIGHUP');
  const deadline = Date.now() + 300_000;
  while ((readState(env).restartedAt ?? 0) === (before.restartedAt ?? 0)) {
    if (Date.now() > deadline) throw new Error('the keeper did not restart the APIs and workers within 300 s');
    await pause(250);
  }
  say('restore: APIs and workers restarted one at a time');
}
