import { Redis } from 'ioredis';
import type { Logger } from './observability/logger.ts';

/**
 * ioredis connections. No keyPrefix: it breaks BullMQ, which namespaces its
 * own keys with the `prefix` option; our keys go through `redisKeys` instead.
 * maxRetriesPerRequest null is what BullMQ requires of its workers'
 * connections: they wait out an outage. The API tier's connection fails
 * fast instead (no offline queue), so a request during an outage answers 503
 * at once rather than hanging until Redis is back. It also auto-pipelines:
 * the commands of every request handled in one event-loop turn (credential
 * lookups, ETag fingerprints, retry-key scripts) leave in one socket write,
 * which halves the CPU of a 304 in Redis and cuts it in the API.
 */
export function connectRedis(url: string, name: string, mode: 'wait' | 'fail-fast' = 'wait'): Redis {
  if (mode === 'fail-fast') return new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectionName: name, enableAutoPipelining: true });
  return new Redis(url, { maxRetriesPerRequest: null, connectionName: name, lazyConnect: false });
}

/** Resolves once the connection can take commands (a fail-fast connection refuses them before). */
export function redisReady(connection: Redis): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => connection.once('ready', () => resolve()));
}

/** Every Redis key this service writes outside BullMQ. All carry TTLs (see callers). */
export function redisKeys(prefix: string) {
  return {
    idempotency: (scope: string, key: string) => `${prefix}:idem:${scope}:${key}`,
    rateBucket: (subject: string, rateClass: string) => `${prefix}:rate:${rateClass}:${subject}`,
    etagScope: (scope: string) => `${prefix}:etag:${scope}`,
    credential: (tokenHash: string) => `${prefix}:credential:${tokenHash}`,
    commitPosition: (agentId: string) => `${prefix}:position:${agentId}`,
    outboxDirty: `${prefix}:ledger:dirty`,
    ledgerHead: `${prefix}:ledger:head`,
    replyChannel: (instanceId: string) => `${prefix}:replies:${instanceId}`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;

/** Closes a connection politely when Redis answers, at once when it does not. */
export async function closeRedis(connection: Redis): Promise<void> {
  try {
    await connection.quit();
  } catch {
    connection.disconnect();
  }
}

/**
 * Queue jobs and retry keys must never be evicted: warn at start when Redis
 * would evict under memory pressure. Managed Redis may refuse CONFIG; then
 * nothing can be known and nothing is said.
 */
export async function warnIfRedisMayEvict(connection: Redis, logger: Logger): Promise<string | null> {
  try {
    const [, policy] = (await connection.config('GET', 'maxmemory-policy')) as [string, string];
    if (policy && policy !== 'noeviction') {
      logger.warn({ maxmemoryPolicy: policy }, `Redis maxmemory-policy is ${policy}: queue jobs and retry keys can be evicted; set it to noeviction`);
    }
    return policy ?? null;
  } catch {
    return null;
  }
}
