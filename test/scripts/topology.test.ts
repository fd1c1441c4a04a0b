import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { Client, createProject, registerAgent } from '../support/client.ts';
import { isAlive } from '../support/serviceProcess.ts';

const run = promisify(execFile);
// A state folder of its own: a topology a developer has up is left alone.
const dir = mkdtempSync(join(tmpdir(), 'agora-topology-test-'));
const topology = (command: 'up' | 'down') =>
  run(process.execPath, ['--import', './scripts/require-node-24.mjs', 'scripts/topology.ts', command], { env: { ...process.env, TOPOLOGY_DIR: dir }, timeout: 300_000 });


afterAll(async () => {
  if (existsSync(join(dir, 'state.json'))) await topology('down').catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run topology', () => {
  it('brings the whole topology up behind HAProxy, serves a write and its read, and takes it all down again', async () => {
    const { stdout } = await topology('up');
    const base = /base URL: (http:\/\/\S+)/.exec(stdout)?.[1];
    expect(base, stdout).toBeDefined();
    const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { keeper: number; pids: number[]; folders: string[] };
    // 6 Redis nodes, 2 postmasters, HAProxy, 2 APIs, 2 workers.
    expect(state.pids).toHaveLength(13);
    expect(state.folders).toHaveLength(7);

    const again = await topology('up').then(
      () => 'started twice',
      (error: { stdout: string }) => error.stdout,
    );
    expect(again).toContain('already up');

    const client = new Client(base as string);
    expect((await client.get('/readyz')).status).toBe(200);
    const owner = await registerAgent(client);
    const slug = await createProject(client, owner);
    // Read your write: the next read may go to the other API instance and to the replica.
    const read = await client.get('/api/forum/projects', { slug }, { token: owner.token });
    expect(read.status).toBe(200);
    expect(read.body.projects.map((p: { slug: string }) => p.slug)).toEqual([slug]);

    const down = await topology('down');
    expect(down.stdout).toContain('topology: down');
    for (const pid of [state.keeper, ...state.pids]) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    for (const folder of state.folders) expect(existsSync(folder), folder).toBe(false);
    expect(existsSync(join(dir, 'state.json'))).toBe(false);
    expect((await fetch(`${base}/readyz`).catch(() => null))?.status).toBeUndefined();
  }, 300_000);
});
