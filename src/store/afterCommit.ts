import calculateSlot from 'cluster-key-slot';
import type { ChainableCommander, Cluster } from 'ioredis';
import { isCluster, type RedisClient } from '../redis.ts';

/**
 * One queued command: its name and arguments, the key first, or after the
 * count of its keys for a script that takes any number of keys of one slot
 * (src/store/etagFingerprints.ts).
 */
type Queued = [name: string, args: unknown[]];
type Commands = Record<string, (...args: unknown[]) => Promise<unknown>>;

/**
 * The pipeline a worker fills after a commit (ETags, tombstones, retry-key
 * results, then replies) and sends with exec(). On one Redis node it is a
 * real pipeline: one round trip, run in order. Under Redis Cluster a
 * pipeline must stay on one node, and these keys span many: exec() groups
 * the writes by the node serving each key's slot and sends each group as a
 * pipeline of its own, all at once, and publishes the replies only once
 * every write is in place: a client that hears its reply still finds its
 * result stored. The replies (one message per API instance) go one command each: a pipeline of
 * PUBLISHes would go to a random node, which may be the master a failover
 * just killed, while a single command is redirected by the cluster client.
 */
export function afterCommitPipeline(redis: RedisClient): ChainableCommander {
  if (!isCluster(redis)) return redis.pipeline();
  const writes: Queued[] = [];
  const replies: Queued[] = [];
  const pipeline: ChainableCommander = new Proxy({} as ChainableCommander, {
    get(_target, name: string) {
      if (name === 'exec') {
        return async () => {
          await Promise.all(groupByNode(redis, writes).map((group) => sendTogether(redis, group)));
          return Promise.all(
            replies.map(([, [channel, message]]) => redis.publish(String(channel), String(message)).then((n) => [null, n])),
          );
        };
      }
      return (...args: unknown[]) => {
        (name === 'publish' ? replies : writes).push([name, args]);
        return pipeline;
      };
    },
  });
  return pipeline;
}

/** The writes by the master serving their key now; one group each while the slot map is not known yet. */
function groupByNode(cluster: Cluster, writes: Queued[]): Queued[][] {
  const groups = new Map<string, Queued[]>();
  writes.forEach((write, i) => {
    const [first, second] = write[1];
    const node = cluster.slots[calculateSlot(String(typeof first === 'number' ? second : first))]?.join(',') ?? `unmapped ${i}`;
    groups.set(node, [...(groups.get(node) ?? []), write]);
  });
  return [...groups.values()];
}

/**
 * One pipeline for commands served by one node. A pipeline of writes is not
 * redirected when slots move (a failover): then each command of the group
 * goes again on its own, and the cluster client waits out the move for it.
 * Every after-commit write may run twice (it sets a value it carries).
 */
async function sendTogether(cluster: Cluster, queued: Queued[]): Promise<[Error | null, unknown][]> {
  if (queued.length === 0) return [];
  const pipeline = cluster.pipeline();
  const commands = pipeline as unknown as Commands;
  for (const [name, args] of queued) commands[name]?.apply(pipeline, args);
  const results = (await pipeline.exec().catch(() => null)) ?? [[new Error('pipeline failed')]];
  if (results.every(([error]) => !error)) return results as [Error | null, unknown][];
  const one = cluster as unknown as Commands;
  return Promise.all(
    queued.map(async ([name, args]) => [null, await (one[name] as Commands[string]).apply(cluster, args)] as [null, unknown]),
  );
}
