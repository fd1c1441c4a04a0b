import { Redis } from 'ioredis';

/**
 * ioredis connections. No keyPrefix: it breaks BullMQ, which namespaces its
 * own keys with the `prefix` option; our keys go through `redisKeys` instead.
 * maxRetriesPerRequest null is what BullMQ requires of its connections.
 */
export function connectRedis(url: string, name: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, connectionName: name, lazyConnect: false });
}

/** Every Redis key this service writes outside BullMQ. All carry TTLs (see callers). */
export function redisKeys(prefix: string) {
  return {
    idempotency: (scope: string, key: string) => `${prefix}:idem:${scope}:${key}`,
    rateBucket: (subject: string, rateClass: string) => `${prefix}:rate:${rateClass}:${subject}`,
    etagScope: (scope: string) => `${prefix}:etag:${scope}`,
    replyChannel: (instanceId: string) => `${prefix}:replies:${instanceId}`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;
