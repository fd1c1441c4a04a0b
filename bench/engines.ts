import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { openOrm } from '../src/db/orm.ts';

/**
 * The engines a bench run loads, found through their own protocols so that
 * only their processes count (other Redis and Postgres servers on this
 * machine are left out): every Redis node (one, or each node of a cluster
 * with its role) and every Postgres server (the primary and each replica)
 * by its postmaster's pid.
 */
export interface RedisNode {
  port: number;
  role: 'master' | 'replica';
  /** redis-server's pid (INFO server process_id). */
  pid: number;
}

export interface Postmaster {
  role: 'primary' | 'replica';
  pid: number;
  /** The bench's database on it: backends serving other databases (other work on a shared server) do not count. */
  database: string;
}

function infoField(info: string, field: string): string {
  return info.match(new RegExp(`^${field}:(.*)$`, 'm'))?.[1]?.trim() ?? '';
}

async function onNode<T>(host: string, port: number, use: (node: Redis) => Promise<T>): Promise<T> {
  const node = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await node.connect();
    return await use(node);
  } finally {
    node.disconnect();
  }
}

/** The one node of `redisUrl`, or every node of the cluster the first seed belongs to, masters first. */
export async function redisNodes(redisUrl: string, clusterSeeds: string[]): Promise<RedisNode[]> {
  const url = new URL(redisUrl);
  const [seedHost, seedPort] = (clusterSeeds[0] ?? `${url.hostname}:${url.port || 6379}`).split(':') as [string, string];
  const addresses: { host: string; port: number; role: RedisNode['role'] }[] =
    clusterSeeds.length === 0
      ? [{ host: seedHost, port: Number(seedPort), role: 'master' }]
      : // CLUSTER NODES: "<id> <host:port@bus> <flags> ...", flags hold master or slave.
        (await onNode(seedHost, Number(seedPort), (node) => node.call('CLUSTER', 'NODES') as Promise<string>))
          .trim()
          .split('\n')
          .map((line) => line.split(' '))
          .filter(([, , flags]) => !flags?.includes('fail'))
          .map(([, address, flags]) => {
            const [hostPort] = (address ?? '').split('@');
            const at = (hostPort ?? '').lastIndexOf(':');
            return {
              host: (hostPort ?? '').slice(0, at) || seedHost,
              port: Number((hostPort ?? '').slice(at + 1)),
              role: flags?.includes('master') ? 'master' : 'replica',
            };
          });
  const nodes = await Promise.all(
    addresses.map(async ({ host, port, role }) => ({
      port,
      role,
      pid: Number(infoField(await onNode(host, port, (node) => node.info('server')), 'process_id')),
    })),
  );
  return nodes.sort((a, b) => (a.role === b.role ? a.port - b.port : a.role === 'master' ? -1 : 1));
}

/** Commands each node has executed so far (INFO commandstats, every command's calls summed), by port. */
export async function redisCommands(redisUrl: string, clusterSeeds: string[], nodes: RedisNode[]): Promise<Map<number, number>> {
  const host = clusterSeeds[0]?.split(':')[0] ?? new URL(redisUrl).hostname;
  const counts = await Promise.all(
    nodes.map(async ({ port }) => {
      const stats = await onNode(host, port, (node) => node.info('commandstats'));
      return [port, [...stats.matchAll(/calls=(\d+)/g)].reduce((sum, [, calls]) => sum + Number(calls), 0)] as const;
    }),
  );
  return new Map(counts);
}

/** The postmaster serving `databaseUrl`: the parent of the backend that answers it. */
async function postmasterOf(databaseUrl: string): Promise<number> {
  const orm = await openOrm(databaseUrl, { poolMax: 1 });
  try {
    const [row] = await orm.em.fork().execute<{ pid: number }[]>('select pg_backend_pid() as pid');
    return Number(readFileSync(`/proc/${row?.pid}/status`, 'utf8').match(/^PPid:\s+(\d+)/m)?.[1]);
  } finally {
    await orm.close();
  }
}

const databaseOf = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

export async function postmasters(primaryUrl: string, replicaUrls: string[]): Promise<Postmaster[]> {
  return [
    { role: 'primary', pid: await postmasterOf(primaryUrl), database: databaseOf(primaryUrl) },
    ...(await Promise.all(
      replicaUrls.map(async (url) => ({ role: 'replica' as const, pid: await postmasterOf(url), database: databaseOf(url) })),
    )),
  ];
}
