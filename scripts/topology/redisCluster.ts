import { execFileSync } from 'node:child_process';
import { type OwnRedis, startOwnRedis } from '../chaos/services.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function cli(port: number, ...args: string[]): string {
  return execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * A real Redis Cluster on free loopback ports: three masters with a replica
 * each (redis-server --cluster-enabled yes, then redis-cli --cluster create),
 * a short node timeout so a killed master's replica takes over in seconds.
 * stop() removes every node and its folder.
 */
export class RedisCluster {
  readonly nodes: OwnRedis[];

  private constructor(nodes: OwnRedis[]) {
    this.nodes = nodes;
  }

  static async start(): Promise<RedisCluster> {
    // validity factor 0: a replica always takes over, however long ago it last heard from its master.
    const clusterArgs = [
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      '1000',
      '--cluster-replica-validity-factor',
      '0',
    ];
    const nodes: OwnRedis[] = [];
    const cluster = new RedisCluster(nodes);
    try {
      for (let i = 0; i < 6; i++) nodes.push(await startOwnRedis('noeviction', clusterArgs));
      const ports = nodes.map((node) => node.port);
      execFileSync(
        'redis-cli',
        ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'],
        { stdio: 'ignore' },
      );
      await cluster.untilHealthy(60_000);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** REDIS_CLUSTER_NODES for the service: every node as a seed. */
  get seeds(): string {
    return this.nodes.map((node) => `127.0.0.1:${node.port}`).join(',');
  }

  /** Pids of the nodes running now. */
  pids(): number[] {
    return this.nodes.flatMap((node) => (node.pid ? [node.pid] : []));
  }

  /** Every node's data folder. */
  folders(): string[] {
    return this.nodes.map((node) => node.dir);
  }

  /** The master serving a key now (its hash tag decides the slot). */
  masterOf(key: string): OwnRedis {
    const slot = Number(cli(this.alive()[0]?.port ?? 0, 'cluster', 'keyslot', key).trim());
    const shards = JSON.parse(cli(this.alive()[0]?.port ?? 0, '--json', 'cluster', 'slots')) as [number, number, [string, number]][];
    const shard = shards.find(([from, to]) => slot >= from && slot <= to);
    const port = shard?.[2][1];
    const master = this.nodes.find((node) => node.port === port);
    if (!master) throw new Error(`no master serves slot ${slot}`);
    return master;
  }

  private alive(): OwnRedis[] {
    return this.nodes.filter((node) => {
      try {
        return cli(node.port, 'ping').trim() === 'PONG';
      } catch {
        return false;
      }
    });
  }

  /** Kills a master (SIGKILL) and waits until the cluster marked it failed and a replica serves its slots. */
  async failOver(master: OwnRedis, ms = 30_000): Promise<void> {
    master.killNow();
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const witness = this.alive()[0];
      const nodes = witness ? cli(witness.port, 'cluster', 'nodes') : '';
      const failed = nodes.split('\n').some((line) => line.includes(`:${master.port}@`) && line.includes('fail'));
      if (failed) return this.untilHealthy(deadline - Date.now());
      await pause(200);
    }
    throw new Error(`the cluster never marked the master on ${master.port} as failed`);
  }

  /**
   * Every key of the cluster gone at once (FLUSHALL on each master; the replicas follow): queues, jobs in flight,
   * retry keys, rate buckets, ETag fingerprints. What a cluster lost with its disks and started empty looks like.
   */
  flushAll(): void {
    for (const node of this.alive()) if (cli(node.port, 'role').startsWith('master')) cli(node.port, 'flushall');
  }

  /** Waits until every live node reports cluster_state:ok with all slots served. */
  async untilHealthy(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const states = this.alive().map((node) => cli(node.port, 'cluster', 'info'));
      if (states.length > 0 && states.every((info) => info.includes('cluster_state:ok') && info.includes('cluster_slots_ok:16384'))) return;
      await pause(200);
    }
    throw new Error('the Redis Cluster did not become healthy');
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) {
      await node.stop();
      node.cleanUp();
    }
  }
}
