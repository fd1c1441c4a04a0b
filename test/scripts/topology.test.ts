import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessStatus } from '../../scripts/topology/status.ts';
import { Client, createProject, registerAgent } from '../support/client.ts';
import { accepts, privateClone, type Seen, stillRunning, watchUp } from './topologyProcesses.ts';

const run = promisify(execFile);
/**
 * CI brings the topology up once (.ci/run), runs the HTTP suite through it,
 * then this file checks it and takes it down: AGORA_TOPOLOGY_DIR names its
 * state folder. Without it, this file brings up one of its own, in a folder
 * of its own (a topology a developer has up is left alone), from a copy of
 * the working tree in a folder only its owner may enter, as a new user's clone.
 * Then, either way, two `up`s that fail half-way, from that copy too.
 */
const shared = process.env.AGORA_TOPOLOGY_DIR;
const dir = shared ? resolve(shared) : mkdtempSync(join(tmpdir(), 'agora-topology-test-'));
const clone = privateClone();
const topology = (args: string[], topologyDir = dir, env: Record<string, string> = {}) =>
  run(process.execPath, ['--import', './scripts/require-node-24.mjs', 'scripts/topology.ts', ...args], {
    cwd: clone.dir,
    env: { ...process.env, TOPOLOGY_DIR: topologyDir, ...env },
    timeout: 300_000,
  });

interface State {
  keeper: number;
  baseUrl: string;
  env: Record<string, string>;
  pids: number[];
  folders: string[];
}
let state: State;

beforeAll(async () => {
  if (!shared) {
    const { stdout } = await topology(['up']);
    expect(stdout).toContain('topology: up');
  }
  state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as State;
}, 300_000);

afterAll(async () => {
  if (existsSync(join(dir, 'state.json'))) await topology(['down']).catch(() => {});
  if (!shared) rmSync(dir, { recursive: true, force: true });
  rmSync(clone.outer, { recursive: true, force: true });
});

describe('npm run topology', () => {
  it('lists every process with its role as the engines report it, its pid, its port and its health (status --json)', async () => {
    const { stdout } = await topology(['status', '--json']);
    const { processes } = JSON.parse(stdout) as { processes: ProcessStatus[] };
    const count = (role: string) => processes.filter((p) => p.role === role).length;
    expect({
      api: count('api'),
      worker: count('worker'),
      balancer: count('balancer'),
      redisMasters: count('redis master'),
      redisReplicas: count('redis replica'),
      etcd: count('etcd'),
      patroni: count('patroni'),
      postgresLeaders: count('postgres leader'),
      postgresReplicas: count('postgres replica'),
      postgresBalancer: count('postgres balancer'),
      prometheus: count('prometheus'),
      redisExporter: count('redis exporter'),
      postgresExporters: count('postgres exporter'),
    }).toEqual({
      api: 2,
      worker: 2,
      balancer: 1,
      redisMasters: 3,
      redisReplicas: 3,
      etcd: 3,
      patroni: 3,
      postgresLeaders: 1,
      postgresReplicas: 2,
      postgresBalancer: 1,
      prometheus: 1,
      redisExporter: 1,
      postgresExporters: 3,
    });
    expect(processes.filter((p) => p.health !== 'ok')).toEqual([]);
    expect(processes.map((p) => p.pid).sort()).toEqual([...state.pids].sort());
    expect(processes.filter((p) => p.role !== 'worker').every((p) => typeof p.port === 'number' && p.port > 0)).toBe(true);
  }, 120_000);

  it('has Prometheus scraping every target of every job of config/prometheus/prometheus.yml, each up', async () => {
    const jobs = (
      parse(readFileSync('config/prometheus/prometheus.yml', 'utf8')) as { scrape_configs: { job_name: string }[] }
    ).scrape_configs.map((job) => job.job_name);
    const expected = { 'agora-api': 2, 'agora-worker': 2, redis: 6, postgres: 3, haproxy: 1, patroni: 3 };
    expect(jobs.sort()).toEqual(Object.keys(expected).sort());
    // The first scrape of a target comes within one interval (1 s) of Prometheus loading it; a loaded machine may take longer.
    let upByJob: Record<string, number> = {};
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const reply = await fetch(`${state.env.PROMETHEUS_URL}/api/v1/query?${new URLSearchParams({ query: 'up == 1' })}`);
      const { data } = (await reply.json()) as { data: { result: { metric: { job: string } }[] } };
      upByJob = Object.fromEntries(jobs.map((job) => [job, data.result.filter((series) => series.metric.job === job).length]));
      if (jobs.every((job) => upByJob[job] === expected[job as keyof typeof expected])) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(upByJob).toEqual(expected);
  }, 120_000);

  it('refuses a second up while one runs', async () => {
    const again = await topology(['up']).then(
      () => 'started twice',
      (error: { stdout: string }) => error.stdout,
    );
    expect(again).toContain('already up');
  }, 120_000);

  it('serves a write behind HAProxy, and the next read, wherever it lands, sees it', async () => {
    const client = new Client(state.baseUrl);
    expect((await client.get('/readyz')).status).toBe(200);
    const owner = await registerAgent(client);
    const slug = await createProject(client, owner);
    // Read your write: the next read may go to the other API instance and to a Postgres replica.
    const read = await client.get('/api/forum/projects', { slug }, { token: owner.token });
    expect(read.status).toBe(200);
    expect(read.body.projects.map((p: { slug: string }) => p.slug)).toEqual([slug]);
  }, 120_000);

  it('takes it all down: every process stopped, every data folder and the state file removed', async () => {
    const down = await topology(['down']);
    expect(down.stdout).toContain('topology: down');
    expect(await stillRunning([state.keeper, ...state.pids])).toEqual([]);
    for (const folder of state.folders) expect(existsSync(folder), folder).toBe(false);
    expect(existsSync(join(dir, 'state.json'))).toBe(false);
    expect((await fetch(`${state.baseUrl}/readyz`).catch(() => null))?.status).toBeUndefined();
  }, 180_000);
});

/**
 * `up` from the private copy, in a state folder of its own, watched from outside (ps, ss); `during` may act on
 * what has been seen so far. Returns its output and everything seen once it has returned.
 */
async function failingUp(env: Record<string, string>, during?: (seen: Map<number, Seen>, keeper: number) => void) {
  const own = mkdtempSync(join(tmpdir(), 'agora-topology-failing-'));
  const watch = watchUp(join(own, 'state.json'));
  const acting = setInterval(() => {
    const keeper = watch.state()?.keeper;
    if (during && keeper) during(watch.seen, keeper);
  }, 250);
  const result = await topology(['up'], own, env).then(
    () => ({ code: 0, output: '' }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
  );
  clearInterval(acting);
  await watch.stop();
  const keeperLog = readFileSync(join(own, 'keeper.log'), 'utf8');
  const stateLeft = existsSync(join(own, 'state.json'));
  rmSync(own, { recursive: true, force: true });
  return { ...result, keeperLog, stateLeft, seen: [...watch.seen.values()], root: watch.state()?.root };
}

/** The up failed, and of what it started no process runs, no port it listened on answers, no folder is left. */
async function expectNothingLeft(up: Awaited<ReturnType<typeof failingUp>>, leastPorts: number) {
  expect(up.code).toBe(1);
  expect(up.output).toContain('did not come up');
  expect(await stillRunning(up.seen.map((p) => p.pid))).toEqual([]);
  const ports = up.seen.flatMap((p) => [...p.ports]);
  expect(ports.length).toBeGreaterThanOrEqual(leastPorts);
  const open = await Promise.all(ports.map(async (port) => ((await accepts(port)) ? port : null)));
  expect(open.filter((port) => port !== null)).toEqual([]);
  expect(up.root && existsSync(up.root), up.root).toBe(false);
  expect(up.stateLeft).toBe(false);
}

const named = (seen: Seen[], name: string) => seen.filter((p) => p.name === name).length;

describe('npm run topology: an up that fails half-way stops everything it started and frees its ports', () => {
  // The keeper is killed once a postmaster runs: Patroni, as the postgres user, got past initdb from a clone only its owner may enter.
  it('its keeper killed while Postgres starts (a postmaster runs in a session of its own, outside the keeper process group)', async () => {
    let killed = false;
    const up = await failingUp({}, (seen, keeper) => {
      // A postmaster, not initdb's Postgres: initdb runs in the keeper's group, the postmaster in a session of its own.
      if (killed || ![...seen.values()].some((p) => p.name === 'postgres' && p.pgid !== keeper)) return;
      killed = true;
      try {
        process.kill(keeper, 'SIGKILL');
      } catch {
        // already gone: the up fails all the same
      }
    });
    expect(killed).toBe(true);
    expect(up.keeperLog).not.toContain('keeper: up');
    expect(named(up.seen, 'etcd')).toBe(3);
    // At least etcd's client and peer ports: it runs before Patroni starts.
    await expectNothingLeft(up, 6);
  }, 300_000);
});
