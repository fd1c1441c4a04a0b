import type { ChainableCommander, Redis } from 'ioredis';
import type { RedisKeys } from '../redis.ts';

/**
 * How long an agent's last commit position is kept. A replica that lags
 * less than REPLICA_MAX_LAG_MS (at most a minute) has replayed any write
 * older than that, so after this long the position no longer decides anything.
 */
const POSITION_TTL_SECONDS = 300;

/** The only member of an agent's position key (a sorted set, so ZADD GT can keep the greatest). */
const MEMBER = 'lsn';

/**
 * Read-your-writes across API instances: after a batch commits, the worker
 * records a WAL position at or after the commit for every agent that acted
 * in it (src/db/replicas.ts reads it from Postgres), in the same pipeline
 * and before the replies. An agent's later read is served by a replica only
 * once that replica has replayed past its position.
 *
 * A position is the LSN as a decimal byte offset (`pg_lsn - '0/0'`). It is
 * kept as a sorted-set score: ZADD GT keeps the greatest, so two partitions'
 * batches delivering out of order never lower it. Scores are doubles, exact
 * below 2^53 bytes of WAL (8 PiB).
 */
export class CommitPositions {
  // Structural, so it accepts any ioredis connection type that can read a score.
  private readonly redis: Pick<Redis, 'zscore'>;
  private readonly keys: RedisKeys;

  constructor(redis: Pick<Redis, 'zscore'>, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
  }

  /** Queues the position for each agent on the caller's pipeline. */
  record(pipeline: ChainableCommander, agentIds: string[], position: bigint): void {
    for (const agentId of new Set(agentIds)) {
      const key = this.keys.commitPosition(agentId);
      pipeline.zadd(key, 'GT', position.toString(), MEMBER);
      pipeline.expire(key, POSITION_TTL_SECONDS);
    }
  }

  /** The agent's last recorded position; 0 when it has none (no write in the last minutes). */
  async of(agentId: string): Promise<bigint> {
    const score = await this.redis.zscore(this.keys.commitPosition(agentId), MEMBER);
    return score === null ? 0n : BigInt(Math.floor(Number(score)));
  }
}

/**
 * ETag fingerprints carry the position of the commit that set them
 * (`<random>.<position>`), so a read knows how far a replica must have
 * replayed for its body to match its ETag. A fingerprint without one
 * (created by a read) answers 0.
 */
export function fingerprintWithPosition(random: string, position: bigint | null): string {
  return position === null ? random : `${random}.${position}`;
}

function positionInFingerprint(fingerprint: string): bigint {
  const position = /\.(\d+)$/.exec(fingerprint)?.[1];
  return position === undefined ? 0n : BigInt(position);
}

/** The position a read must see: the reader's own last commit, and the commits behind the fingerprints its ETag hashes. */
export function latestPosition(own: bigint, fingerprints: string[]): bigint {
  return fingerprints.reduce((latest, fingerprint) => {
    const position = positionInFingerprint(fingerprint);
    // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.max does not take
    return position > latest ? position : latest;
  }, own);
}
