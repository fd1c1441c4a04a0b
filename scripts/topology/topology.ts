import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ServiceProcess } from '../chaos/processes.ts';
import { freePort } from '../chaos/services.ts';
import { Balancer } from './balancer.ts';
import { Monitoring } from './monitoring.ts';
import { PatroniCluster } from './patroniCluster.ts';
import { RedisCluster } from './redisCluster.ts';

/**
 * Agora as it runs beyond one machine, on this one: a Redis Cluster of 3
 * masters and 3 replicas, Postgres as a Patroni cluster (3 etcd members, a
 * leader and two replicas, HAProxy sending writes to the leader and reads to
 * the replicas), two API and two worker processes, HAProxy
 * (config/haproxy.cfg) in front of the APIs. Every engine is a real one on free loopback ports. Used by
 * `npm run topology` (scripts/topology.ts) and `npm run chaos -- --topology`.
 */
export interface Topology {
  cluster: RedisCluster;
  postgres: PatroniCluster;
  balancer: Balancer;
  /** Prometheus (alerts.yml's rules) scraping every process, with its exporters. */
  monitoring: Monitoring;
  apis: [ServiceProcess, ServiceProcess];
  workers: [ServiceProcess, ServiceProcess];
  /** The balancer's URL: where clients go. */
  baseUrl: string;
  /** The settings every API and worker process runs with (ports aside). */
  serviceEnv: Record<string, string>;
  /** What a client or a test needs: the base URL, the primary, the cluster's seeds and the prefix. */
  clientEnv: Record<string, string>;
  pids(): number[];
  /** Every process running now, with its role, pid and port (`npm run topology -- status`). */
  processes(): TopologyProcess[];
  folders(): string[];
  stop(): Promise<void>;
}

/** One process of the topology. Redis and Postgres roles (master or replica, leader or replica) change with failovers: `topology status` asks them. */
export interface TopologyProcess {
  role:
    | 'api'
    | 'worker'
    | 'balancer'
    | 'redis'
    | 'postgres'
    | 'patroni'
    | 'etcd'
    | 'postgres balancer'
    | 'prometheus'
    | 'redis exporter'
    | 'postgres exporter';
  name: string;
  pid: number;
  /** Where it listens (a worker listens nowhere; the Postgres balancer's is its write port). */
  port: number | null;
  /** For a postmaster, which Patroni restarts with a new pid on a switchover: the file naming its pid now. */
  pidFile?: string;
}

export interface TopologyOptions {
  /** Where the API and worker logs go. */
  logDir: string;
  /** More settings for the API and worker processes (they win over the topology's). */
  env?: Record<string, string>;
  /** Keep every process's output in memory (the chaos suite counts from it); off for a long-lived topology. */
  keepOutput?: boolean;
  /** Prometheus evaluates alerts.yml with every `for:` divided by this (scripts/topology/monitoring.ts); 1 when unset. */
  alertTimeScale?: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await pause(100);
  }
  throw new Error(`topology: ${what} did not happen within ${ms / 1000} s`);
}

export const answersReady = async (url: string) => (await fetch(`${url}/readyz`).catch(() => null))?.status === 200;

/** Starts the whole topology; on a failure half-way it stops what it started and throws. */
export async function startTopology(options: TopologyOptions): Promise<Topology> {
  const database = 'agora';
  let cluster: RedisCluster | undefined;
  let postgres: PatroniCluster | undefined;
  let balancer: Balancer | undefined;
  let monitoring: Monitoring | undefined;
  const services: ServiceProcess[] = [];
  const stop = async () => {
    await monitoring?.stop();
    await balancer?.stop();
    await Promise.all(services.map((service) => service.stop()));
    await postgres?.stop();
    await cluster?.stop();
  };
  try {
    const redisStart = RedisCluster.start().then((started) => (cluster = started));
    const patroniStart = PatroniCluster.start(options.logDir).then((started) => (postgres = started));
    // Both settled before either's failure is thrown: stop() must find whichever did start, or it runs on unstopped.
    await Promise.allSettled([redisStart, patroniStart]);
    [cluster, postgres] = await Promise.all([redisStart, patroniStart]);
    // Through the Postgres balancer: whoever leads now takes the writes, whichever replicas run take the reads.
    const serviceEnv: Record<string, string> = {
      DATABASE_URL: postgres.url(postgres.ports.primary, database),
      DATABASE_REPLICA_URLS: postgres.url(postgres.ports.replicas, database),
      REDIS_CLUSTER_NODES: cluster.seeds,
      REDIS_PREFIX: 'agora',
      HOST: '127.0.0.1',
      // Four processes on one machine: no fixed metrics port to fight over (the workers get theirs below).
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      // Opens /metrics to the topology's Prometheus, which reads it from a 0600 file.
      OPERATOR_TOKEN: randomBytes(24).toString('hex'),
      ...options.env,
    };
    const apiPorts: [number, number] = [await freePort(), await freePort()];
    const apis = apiPorts.map(
      (port, i) =>
        new ServiceProcess('api', { ...serviceEnv, PORT: String(port) }, join(options.logDir, `api-${i + 1}.log`), options.keepOutput),
    ) as [ServiceProcess, ServiceProcess];
    services.push(...apis);
    // The first API migrates (creating the database on the primary); the rest start once it is there.
    const [first, second] = apis;
    first.start();
    await until('the first API answering /readyz', () => answersReady(`http://127.0.0.1:${apiPorts[0]}`));
    second.start();
    const workerMetricsPorts = [await freePort(), await freePort()];
    const workers = workerMetricsPorts.map(
      (metricsPort, i) =>
        new ServiceProcess(
          'worker',
          { ...serviceEnv, PORT: '0', METRICS_PORT: String(metricsPort) },
          join(options.logDir, `worker-${i + 1}.log`),
          options.keepOutput,
        ),
    ) as [ServiceProcess, ServiceProcess];
    services.push(...workers);
    for (const worker of workers) worker.start();
    await until('the second API answering /readyz', () => answersReady(`http://127.0.0.1:${apiPorts[1]}`));
    await until('both workers starting', () => workers.every((worker) => worker.started));
    balancer = await Balancer.start(apiPorts, join(options.logDir, 'haproxy-api.log'));
    await until('the balancer answering /readyz', () => answersReady((balancer as Balancer).url));
    const monitored = {
      apis: apiPorts,
      workers: workerMetricsPorts,
      redis: cluster.nodes.map((node) => node.port),
      postgres: postgres.members,
      haproxy: balancer.metricsPort,
    };
    monitoring = await Monitoring.start(monitored, serviceEnv.OPERATOR_TOKEN as string, options.logDir, options.alertTimeScale);
    const started = { cluster, postgres, balancer, monitoring };
    return {
      ...started,
      apis,
      workers,
      baseUrl: balancer.url,
      serviceEnv,
      clientEnv: {
        AGORA_BASE_URL: balancer.url,
        DATABASE_URL: serviceEnv.DATABASE_URL as string,
        DATABASE_REPLICA_URLS: serviceEnv.DATABASE_REPLICA_URLS as string,
        REDIS_CLUSTER_NODES: cluster.seeds,
        REDIS_PREFIX: serviceEnv.REDIS_PREFIX as string,
        PROMETHEUS_URL: monitoring.url,
      },
      pids: () => [
        ...started.cluster.pids(),
        ...started.postgres.pids(),
        ...[started.balancer.pid, ...services.map((s) => s.pid)].filter((pid): pid is number => pid !== undefined),
        ...started.monitoring.pids(),
      ],
      processes: () => {
        const own = (role: TopologyProcess['role'], name: string, pid: number | undefined, port: number | null) =>
          pid === undefined ? [] : [{ role, name, pid, port }];
        return [
          ...own('balancer', 'haproxy', started.balancer.pid, started.balancer.port),
          ...apis.flatMap((api, i) => own('api', `api-${i + 1}`, api.pid, apiPorts[i] as number)),
          ...workers.flatMap((worker, i) => own('worker', `worker-${i + 1}`, worker.pid, null)),
          ...started.cluster.nodes.flatMap((node) => own('redis', `redis-${node.port}`, node.pid, node.port)),
          ...started.monitoring.processes(),
          ...started.postgres.processes().flatMap((p) =>
            own(p.role as TopologyProcess['role'], p.name, p.pid, p.port).map((entry) => ({
              ...entry,
              ...(p.pidFile ? { pidFile: p.pidFile } : {}),
            })),
          ),
        ];
      },
      folders: () => [...started.cluster.folders(), started.postgres.dir, started.monitoring.dir],
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
