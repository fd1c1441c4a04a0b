import { redisKeys, type RedisClient, type RedisKeys } from '../redis.ts';
import { CommitPositions } from './commitPositions.ts';
import { CredentialCache } from './credentialCache.ts';
import { EtagFingerprints } from './etagFingerprints.ts';
import { IdempotencyStore } from './idempotencyStore.ts';
import { LedgerMarks } from './ledgerMarks.ts';

/** The Redis-backed stores both roles use, each on the role's own connection. */
export interface Stores {
  keys: RedisKeys;
  etags: EtagFingerprints;
  credentials: CredentialCache;
  ledgerMarks: LedgerMarks;
  idempotency: IdempotencyStore;
  positions: CommitPositions;
}

/**
 * The stores on one connection: the API's fails fast (a request answers 503
 * during an outage), the worker's waits the outage out.
 */
export function storesOn(redis: RedisClient, prefix: string): Stores {
  const keys = redisKeys(prefix);
  return {
    keys,
    etags: new EtagFingerprints(redis, keys),
    credentials: new CredentialCache(redis, keys),
    ledgerMarks: new LedgerMarks(redis, keys),
    idempotency: new IdempotencyStore(redis),
    positions: new CommitPositions(redis, keys),
  };
}
