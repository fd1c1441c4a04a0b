import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Settings } from '../config/settings.ts';
import type { Logger } from './logging/logger.ts';

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
 * A 'subscriber' connection waits like 'wait' and takes only SUBSCRIBE, through
 * subscribeKept.
 */
export function connectRedis(
  target: RedisTarget,
  name: string,
  mode: 'wait' | 'fail-fast' | 'subscriber' = 'wait',
  autoPipelining = mode === 'fail-fast',
): RedisClient {
  const failFast = mode === 'fail-fast';
  const options: RedisOptions = failFast
    ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectionName: name }
    : { maxRetriesPerRequest: null, connectionName: name, autoResubscribe: mode !== 'subscriber' };
  if (target.redisClusterNodes.length === 0) return new Redis(target.redisUrl, { ...options, enableAutoPipelining: autoPipelining });
  // A failover moves slots: commands wait out the redirection briefly, then (fail-fast) answer 503.
  return new Cluster(target.redisClusterNodes, {
    redisOptions: options,
    enableOfflineQueue: !failFast,
    enableAutoPipelining: autoPipelining,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 200,
  });
}

/**
 * The connection a role's BullMQ queues use. BullMQ defines its sixty-odd
 * scripts on the connection it is given, and ioredis copies every script
 * defined on a connection onto each pipeline built on it (a quarter of a
 * millisecond each). The API's connection auto-pipelines: one pipeline per
 * event-loop turn, so there the queues get a connection of their own
 * (without auto-pipelining, which BullMQ has no use for) and the API's
 * auto-pipelines stay cheap; its queues send one job per batch, so their
 * own socket costs a write per batch. Under Redis Cluster the worker builds
 * an after-commit pipeline per master, so there its queues get their own
 * connection too. The worker on one node shares its role's connection (its
 * one pipeline a batch; measured both ways, a second connection made it
 * slower, docs/scaling.md).
 */
export function queueConnection(target: RedisTarget, roleConnection: RedisClient, name: string, mode: 'wait' | 'fail-fast'): RedisClient {
  if (target.redisClusterNodes.length === 0 && mode === 'wait') return roleConnection;
  return connectRedis(target, name, mode, false);
}

/** A connection to one Redis node or to a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisClient = Redis | Cluster;
export type RedisTarget = Pick<Settings, 'redisUrl' | 'redisClusterNodes'>;

export function isCluster(connection: RedisClient): connection is Cluster {
  return connection instanceof Cluster;
}

/**
 * BullMQ's key prefix. Under Redis Cluster it is a hash tag, as BullMQ
 * requires there: every queue's keys then share one slot, so its Lua
 * scripts never cross slots.
 */
export function queuePrefix(settings: Pick<Settings, 'redisPrefix' | 'redisClusterNodes'>): string {
  return settings.redisClusterNodes.length > 0 ? `{${settings.redisPrefix}}` : settings.redisPrefix;
}

/** Resolves once the connection can take commands (a fail-fast connection refuses them before). */
export function redisReady(connection: RedisClient): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => connection.once('ready', () => resolve()));
}

/**
 * Every Redis key this service writes outside BullMQ. All carry TTLs (see
 * callers). The part in braces is the key's hash tag: under Redis Cluster
 * the keys one script or MGET touches share a slot. A retry key and the
 * rate bucket claimed with it share their bucket owner's tag (admission.ts);
 * every ETag fingerprint one tag (one MGET per read); the ledger marks another.
 */
export function redisKeys(prefix: string) {
  return {
    idempotency: (scope: string, key: string, bucketOwner = scope) => `${prefix}:idem:{${bucketOwner}}:${scope}:${key}`,
    rateBucket: (owner: string, rateClass: string) => `${prefix}:rate:{${owner}}:${rateClass}`,
    etagScope: (scope: string) => `${prefix}:{etag}:${scope}`,
    credential: (tokenHash: string) => `${prefix}:credential:${tokenHash}`,
    commitPosition: (agentId: string) => `${prefix}:position:${agentId}`,
    outboxDirty: `${prefix}:{ledger}:dirty`,
    ledgerHead: `${prefix}:{ledger}:head`,
    /** Pub/sub channel, not a key: every raise of the ledger head is announced on it (event streams, src/ledger/fanout.ts). */
    ledgerAnnouncements: `${prefix}:ledger:announced`,
    replyChannel: (instanceId: string) => `${prefix}:replies:${instanceId}`,
    /** The event-stream slots an agent or a source address holds on every API instance (src/store/streamSlots.ts). */
    streamSlots: (owner: string) => `${prefix}:streams:{${owner}}`,
    /** Pub/sub channel, not a key: token hashes whose credential just changed (revoked, or their agent's key rotated). */
    credentialsChanged: `${prefix}:credentials:changed`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;

/**
 * Subscribes a 'subscriber' connection to `channel`, now and after each
 * reconnection. ioredis's own resubscription (autoResubscribe) sends
 * SUBSCRIBE with no rejection handler: a connection closed while that
 * SUBSCRIBE was in flight (a stop just after Redis came back) rejected it
 * unhandled, which failed a CI run (redis/ioredis#2187, merged after 6.0.0,
 * unreleased). Here a failed resubscription is the connection's 'error', as
 * its other errors are (the health watch listens), and the next 'ready'
 * subscribes again.
 */
export async function subscribeKept(connection: RedisClient, channel: string): Promise<void> {
  // After the first subscription: a connection not yet ready would otherwise subscribe twice as it connects.
  await connection.subscribe(channel);
  connection.on('ready', () => {
    connection.subscribe(channel).catch((error: Error) => {
      if (connection.listenerCount('error') > 0) connection.emit('error', error);
    });
  });
}

/** Closes a connection politely when Redis answers, at once when it does not. */
export async function closeRedis(connection: RedisClient): Promise<void> {
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
export async function warnIfRedisMayEvict(connection: RedisClient, logger: Logger): Promise<string | null> {
  try {
    const [, policy] = (await connection.config('GET', 'maxmemory-policy')) as [string, string];
    if (policy && policy !== 'noeviction') {
      logger.warn(
        { maxmemoryPolicy: policy },
        `Redis maxmemory-policy is ${policy}: queue jobs and retry keys can be evicted; set it to noeviction`,
      );
    }
    return policy ?? null;
  } catch {
    return null;
  }
}
