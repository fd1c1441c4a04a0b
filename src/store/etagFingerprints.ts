import { randomBytesPooled } from '../ids.ts';
import { fingerprintWithPosition } from './commitPositions.ts';
import type { ChainableCommander } from 'ioredis';
import type { RedisKeys, RedisClient } from '../redis.ts';

/**
 * A random fingerprint per read scope ("projects", "tokens:<agent>", ...).
 * Commands replace the fingerprints of the scopes they touch after commit;
 * a read's ETag hashes the fingerprints of the scopes it depends on, so a
 * conditional read is answered from Redis without touching Postgres.
 * Random values (not counters) keep an expired key from reviving an old ETag.
 */
const TTL_SECONDS = 7 * 86_400;

/** Every key of KEYS set to the ARGV value of the same index, for ARGV[#KEYS + 1] seconds (all in the {etag} slot). */
const bumpScript = `
local ttl = ARGV[#KEYS + 1]
for i, key in ipairs(KEYS) do
  redis.call('SET', key, ARGV[i], 'EX', ttl)
end
`;

interface BumpCommand {
  agoraBumpEtags(keyCount: number, ...keysThenValues: (string | number)[]): unknown;
}

export class EtagFingerprints {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
    redis.defineCommand('agoraBumpEtags', { lua: bumpScript });
  }

  async read(scopes: string[]): Promise<string[]> {
    if (scopes.length === 0) return [];
    const keys = scopes.map((s) => this.keys.etagScope(s));
    const values = await this.redis.mget(...keys);
    return Promise.all(
      values.map(async (value, i) => {
        if (value) return value;
        const key = keys[i] as string;
        await this.redis.set(key, randomBytesPooled(9).toString('base64url'), 'EX', TTL_SECONDS, 'NX');
        return (await this.redis.get(key)) ?? '';
      }),
    );
  }

  /** Fresh fingerprints at once, for state an API process changes itself (a token's lastUsedAt), not a worker's commit. */
  async bumpNow(scopes: string[]): Promise<void> {
    const pipeline = this.redis.pipeline();
    this.bump(pipeline, scopes);
    await pipeline.exec();
  }

  /**
   * Queues fresh fingerprints for the scopes on `pipeline`; the caller sends it with its other writes.
   * `position`: the commit's WAL position, when replicas serve reads (see commitPositions.ts).
   */
  bump(pipeline: ChainableCommander, scopes: string[], position: bigint | null = null): void {
    // One command for them all, not one per scope: a batch touches dozens.
    const keys = [...new Set(scopes)].map((scope) => this.keys.etagScope(scope));
    if (keys.length === 0) return;
    const values = keys.map(() => fingerprintWithPosition(randomBytesPooled(9).toString('base64url'), position));
    (pipeline as unknown as BumpCommand).agoraBumpEtags(keys.length, ...keys, ...values, TTL_SECONDS);
  }
}
