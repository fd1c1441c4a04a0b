/**
 * `npm run topology -- up | down | status [--json]`: the whole topology of
 * scripts/topology/topology.ts on this machine, without Docker (Redis
 * Cluster 3+3, Postgres under Patroni with 3 etcd members and its own
 * HAProxy, HAProxy in front of 2 APIs, 2 workers, Prometheus with its
 * exporters watching them: scripts/topology/monitoring.ts). `up` starts a detached keeper process that holds it, waits
 * until it serves, prints the base URL and the env a client uses, and
 * returns; the topology outlives it. `down` stops the keeper (which stops
 * everything cleanly), then SIGTERMs and SIGKILLs whatever of the recorded
 * pids still runs, and whatever else the topology left running
 * (scripts/topology/processes.ts: `leftovers`), and removes the data folders
 * and the state file. An `up` that fails (an engine that does not start, a
 * keeper that dies or hangs, Ctrl-C) does the same before it returns.
 * `status --json` lists every process with its role as the engines report it
 * now (redis master or replica, postgres leader or replica), pid, port and
 * health: what operators, tests and outside fault tools look up.
 *
 * Every data folder lies under one root in the temp folder (the keeper's
 * TMPDIR), never in the clone, and each engine works in its own: Patroni runs
 * as the postgres user, who may not enter a clone in a folder only its owner
 * enters (a home folder, a `mktemp -d`).
 *
 * State: TOPOLOGY_DIR (default .topology/): state.json and every log.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { alive, leftovers, stopProcesses } from './topology/processes.ts';
import { processStatus } from './topology/status.ts';
import { backupConfigPath } from './topology/pgBackRest.ts';
import type { PostgresState } from './topology/postgresState.ts';
import { startTopology, type TopologyProcess } from './topology/topology.ts';
import type { ServiceProcess } from './chaos/processes.ts';

interface State {
  status: 'starting' | 'up';
  keeper: number;
  /** The folder every data folder of the topology is under (agora-topology-* in the temp folder). */
  root: string;
  baseUrl?: string;
  env?: Record<string, string>;
  ports?: Record<string, number | number[]>;
  pids?: number[];
  processes?: TopologyProcess[];
  folders?: string[];
  /** What `npm run backup` needs (scripts/backup.ts): the Patroni cluster's folder, pgBackRest's configuration, each member. */
  postgres?: PostgresState;
  /** When the keeper last restarted the APIs and workers (SIGHUP, after a restore). */
  restartedAt?: number;
}

const dir = resolve(process.env.TOPOLOGY_DIR ?? '.topology');
const stateFile = join(dir, 'state.json');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function readState(): State | null {
  try {
    return JSON.parse(readFileSync(stateFile, 'utf8')) as State;
  } catch {
    return null;
  }
}

function describe(state: State): string {
  const env = Object.entries(state.env ?? {}).map(([name, value]) => `  ${name}=${value}`);
  return [`base URL: ${state.baseUrl}`, 'env for a client or a test:', ...env, `logs and state: ${dir}`].join('\n');
}

/** `up`: start the keeper detached, wait until it reports the topology serving. */
async function up(): Promise<number> {
  const existing = readState();
  if (existing && alive(existing.keeper)) {
    console.log(
      `topology: already up (keeper pid ${existing.keeper}); \`npm run topology -- down\` first\n${existing.baseUrl ? describe(existing) : ''}`,
    );
    return 1;
  }
  if (existing) await down();
  mkdirSync(dir, { recursive: true });
  // Entered by Patroni as the postgres user, on the way to its own folder.
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'agora-topology-')));
  chmodSync(root, 0o755);
  const keeperLog = join(dir, 'keeper.log');
  const log = openSync(keeperLog, 'a');
  const keeper = spawn(process.execPath, ['--import', './scripts/require-node-24.mjs', 'scripts/topology.ts', 'keep'], {
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...process.env, TOPOLOGY_DIR: dir, TMPDIR: root },
  });
  keeper.unref();
  writeFileSync(stateFile, JSON.stringify({ status: 'starting', keeper: keeper.pid as number, root } satisfies State, null, 2));
  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
  };
  process.once('SIGINT', interrupt).once('SIGTERM', interrupt);
  const deadline = Date.now() + 240_000;
  while (Date.now() < deadline && !interrupted) {
    const state = readState();
    if (state?.status === 'up') {
      console.log(`topology: up\n${describe(state)}`);
      return 0;
    }
    if (!alive(keeper.pid as number)) break;
    await pause(250);
  }
  const failure = readFileSync(keeperLog, 'utf8').match(/^keeper: failed: .*$/m)?.[0];
  console.error(`topology: did not come up${interrupted ? ' (interrupted)' : ''}; ${failure ? `${failure}; ` : ''}see ${keeperLog}`);
  await down();
  return 1;
}

/** The keeper: holds the topology until SIGTERM or SIGINT, then stops it. */
async function keep(): Promise<number> {
  const topology = await startTopology({ logDir: dir, keepOutput: false }).catch((error: unknown) => {
    // startTopology stopped what it had started; `up` reads this line and sweeps up whatever is left.
    console.error(`keeper: failed: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  });
  if (!topology) return 1;
  const state: State = {
    status: 'up',
    keeper: process.pid,
    // up made it this process's TMPDIR.
    root: tmpdir(),
    baseUrl: topology.baseUrl,
    env: topology.clientEnv,
    ports: {
      balancer: topology.balancer.port,
      redis: topology.cluster.nodes.map((node) => node.port),
      postgresPrimary: topology.postgres.ports.primary,
      postgresReplicas: topology.postgres.ports.replicas,
      prometheus: topology.monitoring.prometheusPort,
    },
    pids: topology.pids(),
    processes: topology.processes(),
    folders: topology.folders(),
    postgres: {
      dir: topology.postgres.dir,
      backupConfig: backupConfigPath(topology.postgres.dir),
      members: topology.postgres.members.map(({ name, dataDir, pgPort, restPort }) => ({ name, dataDir, pgPort, restPort })),
    },
  };
  writeFileSync(stateFile, JSON.stringify(state, null, 2));
  console.log(`keeper: up\n${describe(state)}`);
  // After a point-in-time restore (npm run backup): the APIs and workers hold caches of a history the database no
  // longer has (rendered reads, commit positions); they are restarted one at a time, and state.json names the new pids.
  let restarting = Promise.resolve();
  process.on('SIGHUP', () => {
    restarting = restarting.then(async () => {
      await restartServices([...topology.apis, ...topology.workers]);
      writeFileSync(
        stateFile,
        JSON.stringify({ ...state, pids: topology.pids(), processes: topology.processes(), restartedAt: Date.now() }, null, 2),
      );
      console.log('keeper: APIs and workers restarted');
    });
  });
  await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  console.log('keeper: stopping');
  await topology.stop();
  console.log('keeper: stopped');
  return 0;
}

/** One at a time, so that the balancer always has an API to send to: SIGTERM (a drain), then a fresh process. */
async function restartServices(services: ServiceProcess[]): Promise<void> {
  for (const service of services) {
    const pid = service.pid;
    if (pid !== undefined) await stopProcesses([pid], 30_000);
    service.start();
    const deadline = Date.now() + 60_000;
    while (!service.started && Date.now() < deadline) await pause(100);
  }
}

/** `down`: the keeper first (a clean stop of everything), then whatever is left, recorded or not. */
async function down(): Promise<number> {
  const state = readState();
  if (!state) {
    console.log('topology: not up (no state file)');
    return 0;
  }
  let stopped = await stopProcesses([state.keeper], 60_000);
  stopped += await stopProcesses(state.pids ?? [], 5_000);
  // A root read from the file that is not ours would have every process working under it stopped, and it removed.
  const root = basename(state.root ?? '').startsWith('agora-topology-') ? state.root : null;
  // A few rounds: a process stopped in one may have started another meanwhile (a Patroni, its Postgres).
  for (let round = 0; root && round < 5; round++) {
    const left = leftovers(state.keeper, root);
    if (left.length === 0) break;
    stopped += await stopProcesses(left, 5_000);
  }
  for (const folder of [...(state.folders ?? []), ...(root ? [root] : [])]) rmSync(folder, { recursive: true, force: true });
  rmSync(stateFile, { force: true });
  console.log(`topology: down (${stopped} processes stopped, data folders removed; logs kept in ${dir})`);
  return 0;
}

async function status(): Promise<number> {
  const json = process.argv.includes('--json');
  const state = readState();
  if (!state || !alive(state.keeper)) {
    console.log(json ? JSON.stringify({ status: 'down', processes: [] }) : 'topology: not up');
    return 1;
  }
  const processes = await processStatus(state.processes ?? []);
  if (json) {
    console.log(
      JSON.stringify(
        { status: state.status, keeper: state.keeper, baseUrl: state.baseUrl, prometheusUrl: state.env?.PROMETHEUS_URL, processes },
        null,
        2,
      ),
    );
    return 0;
  }
  const table = processes.map(
    (p) => `  ${p.role.padEnd(18)} ${p.name.padEnd(18)} pid ${String(p.pid).padEnd(8)} port ${String(p.port ?? '-').padEnd(6)} ${p.health}`,
  );
  console.log([`topology: ${state.status}`, ...(state.baseUrl ? [describe(state)] : []), 'processes:', ...table].join('\n'));
  return 0;
}

const commands: Record<string, () => Promise<number> | number> = { up, down, status, keep };
const command = commands[process.argv[2] ?? ''];
if (!command) {
  console.error('usage: npm run topology -- up | down | status [--json]');
  process.exit(2);
}
if (!existsSync('config/haproxy.cfg')) {
  console.error('topology: run it from the repository root');
  process.exit(2);
}
process.exit(await command());
