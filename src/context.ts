import type { Redis } from 'ioredis';
import type { Settings } from '../config/settings.ts';
import type { Orm } from './db/orm.ts';
import type { Logger } from './observability/logger.ts';
import type { Metrics } from './observability/metrics.ts';
import type { DependencyHealth } from './observability/outages.ts';
import type { Dispatcher } from './pipeline/dispatcher.ts';
import type { RedisKeys } from './redis.ts';
import type { CredentialCache } from './store/credentialCache.ts';
import type { EtagFingerprints } from './store/etagFingerprints.ts';
import type { LedgerMarks } from './store/ledgerMarks.ts';
import type { IdempotencyStore } from './store/idempotencyStore.ts';
import type { RateLimiter } from './store/rateLimiter.ts';

/** What every role of one process shares. */
export interface Runtime {
  settings: Settings;
  orm: Orm;
  redis: Redis;
  logger: Logger;
  metrics: Metrics;
  health: DependencyHealth;
}

/** What the HTTP tier needs to serve a request. */
export interface ApiContext extends Runtime {
  keys: RedisKeys;
  etags: EtagFingerprints;
  credentials: CredentialCache;
  ledgerMarks: LedgerMarks;
  idempotency: IdempotencyStore;
  rateLimiter: RateLimiter;
  dispatcher: Dispatcher;
}
