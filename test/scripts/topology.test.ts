import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessStatus } from '../../scripts/topology/status.ts';
import { Client, createProject, registerAgent } from '../support/client.ts';
import { isAlive } from '../support/serviceProcess.ts';

const run = promisify(execFile);
/**
 * CI brings the topology up once (.ci/run), runs the HTTP suite through it,
 * then this file checks it and takes it down: AGORA_TOPOLOGY_DIR names its
 * state folder. Without it, this file brings up one of its own, in a folder
 * of its own (a topology a developer has up is left alone).
 */
const shared = process.env.AGORA_TOPOLOGY_DIR;
const dir = shared ?? mkdtempSync(join(tmpdir(), 'agora-topology-test-'));
const topology = (...args: string[]) =>
  run(process.execPath, ['--import', './scripts/require-node-24.mjs', 'scripts/topology.ts', ...args], { env: { ...process.env, TOPOLOGY_DIR: dir }, timeout: 300_000 });

interface State {
  keeper: number;
  baseUrl: string;
  pids: number[];
  folders: string[];
}
let state: State;

beforeAll(async () => {
  if (!shared) {
    const { stdout } = await topology('up');
    expect(stdout).toContain('topology: up');
  }
  state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as State;
}, 300_000);

afterAll(async () => {
  if (existsSync(join(dir, 'state.json'))) await topology('down').catch(() => {});
  if (!shared) rmSync(dir, { recursive: true, force: true });
});

describe('npm run topology', () => {
  it('lists every process with its role as the engines report it, its pid, its port and its health (status --json)', async () => {
    const { stdout } = await topology('status', '--json');
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
    }).toEqual({ api: 2, worker: 2, balancer: 1, redisMasters: 3, redisReplicas: 3, etcd: 3, patroni: 3, postgresLeaders: 1, postgresReplicas: 2, postgresBalancer: 1 });
    expect(processes.filter((p) => p.health !== 'ok')).toEqual([]);
    expect(processes.map((p) => p.pid).sort()).toEqual([...state.pids].sort());
    expect(processes.filter((p) => p.role !== 'worker').every((p) => typeof p.port === 'number' && p.port > 0)).toBe(true);
  }, 120_000);

  it('refuses a second up while one runs', async () => {
    const again = await topology('up').then(
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
    const down = await topology('down');
    expect(down.stdout).toContain('topology: down');
    for (const pid of [state.keeper, ...state.pids]) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    for (const folder of state.folders) expect(existsSync(folder), folder).toBe(false);
    expect(existsSync(join(dir, 'state.json'))).toBe(false);
    expect((await fetch(`${state.baseUrl}/readyz`).catch(() => null))?.status).toBeUndefined();
  }, 180_000);
});
