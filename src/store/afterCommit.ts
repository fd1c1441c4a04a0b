import type { ChainableCommander } from 'ioredis';
import { isCluster, type RedisClient } from '../redis.ts';

/**
 * The pipeline a worker fills after a commit (ETags, tombstones, retry-key
 * results, then replies) and sends with exec(). On one Redis node it is a
 * real pipeline: one round trip, run in order. Under Redis Cluster a
 * pipeline must stay within one slot, and these keys span many, so each
 * write goes to its own node as it is queued and exec() publishes the
 * replies only once every write is in place: a client that hears its reply
 * still finds its result stored.
 */
export function afterCommitPipeline(redis: RedisClient): ChainableCommander {
  if (!isCluster(redis)) return redis.pipeline();
  const writes: Promise<unknown>[] = [];
  const replies: [string, string][] = [];
  const commands = redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const pipeline: ChainableCommander = new Proxy({} as ChainableCommander, {
    get(_target, name: string) {
      if (name === 'exec') {
        return async () => {
          await Promise.all(writes);
          return Promise.all(replies.map(([channel, message]) => redis.publish(channel, message).then((n) => [null, n])));
        };
      }
      return (...args: unknown[]) => {
        if (name === 'publish') replies.push([String(args[0]), String(args[1])]);
        else writes.push((commands[name] as (...a: unknown[]) => Promise<unknown>).apply(redis, args));
        return pipeline;
      };
    },
  });
  return pipeline;
}
