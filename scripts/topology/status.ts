import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { alive } from './processes.ts';
import type { TopologyProcess } from './topology.ts';

const run = promisify(execFile);

/** A process of the topology as it is now: its role as the engines report it (a Redis or Postgres role follows failovers) and whether it serves. */
export interface ProcessStatus {
  role: string;
  name: string;
  pid: number;
  port: number | null;
  health: 'ok' | 'failing' | 'down';
}

const answers = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(5000) }).then(
    (reply) => reply.ok,
    () => false,
  );

function acceptsTcp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const settle = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(5000);
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
    socket.once('timeout', () => settle(false));
  });
}

async function redisRole(port: number): Promise<string | null> {
  const { stdout } = await run('redis-cli', ['-p', String(port), 'role'], { timeout: 5000 }).catch(() => ({ stdout: '' }));
  const role = stdout.split('\n')[0]?.trim();
  return role === 'master' ? 'redis master' : role === 'slave' ? 'redis replica' : null;
}

/** Patroni's view of its members (leader, sync_standby, replica), asked of the first Patroni that answers. */
async function patroniMembers(processes: TopologyProcess[]): Promise<Map<string, { role: string; state: string }>> {
  for (const patroni of processes.filter((p) => p.role === 'patroni' && alive(p.pid))) {
    const reply = await fetch(`http://127.0.0.1:${patroni.port}/cluster`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
    if (!reply?.ok) continue;
    const { members } = (await reply.json()) as { members: { name: string; role: string; state: string }[] };
    return new Map(members.map((m) => [m.name, { role: m.role, state: m.state }]));
  }
  return new Map();
}

/** The pid a pid file names now (a postmaster Patroni restarted), else the one recorded. */
function currentPid(p: TopologyProcess): number {
  try {
    return p.pidFile ? Number(readFileSync(p.pidFile, 'utf8').split('\n')[0]) || p.pid : p.pid;
  } catch {
    return p.pid;
  }
}

/** Every recorded process, asked now. */
export async function processStatus(recorded: TopologyProcess[]): Promise<ProcessStatus[]> {
  const processes = recorded.map((p) => ({ ...p, pid: currentPid(p) }));
  const members = await patroniMembers(processes);
  return Promise.all(
    processes.map(async (p): Promise<ProcessStatus> => {
      const base = { name: p.name, pid: p.pid, port: p.port };
      if (!alive(p.pid)) return { ...base, role: p.role, health: 'down' };
      const verdict = (ok: boolean) => (ok ? 'ok' : 'failing') as ProcessStatus['health'];
      const port = p.port as number;
      switch (p.role) {
        case 'api':
        case 'balancer':
          return { ...base, role: p.role, health: verdict(await answers(`http://127.0.0.1:${port}/readyz`)) };
        case 'redis': {
          const role = await redisRole(port);
          return { ...base, role: role ?? 'redis', health: verdict(role !== null) };
        }
        case 'postgres': {
          const member = members.get(p.name);
          const role = member?.role === 'leader' ? 'postgres leader' : member ? 'postgres replica' : 'postgres';
          return { ...base, role, health: verdict(member !== undefined && ['running', 'streaming'].includes(member.state)) };
        }
        case 'patroni':
        case 'etcd':
          return { ...base, role: p.role, health: verdict(await answers(`http://127.0.0.1:${port}/health`)) };
        case 'prometheus':
          return { ...base, role: p.role, health: verdict(await answers(`http://127.0.0.1:${port}/-/ready`)) };
        case 'redis exporter':
          return { ...base, role: p.role, health: verdict(await answers(`http://127.0.0.1:${port}/health`)) };
        case 'postgres exporter':
          return { ...base, role: p.role, health: verdict(await answers(`http://127.0.0.1:${port}/metrics`)) };
        case 'postgres balancer':
          return { ...base, role: p.role, health: verdict(await acceptsTcp(port)) };
        default:
          // A worker listens nowhere: alive is all there is to know from outside.
          return { ...base, role: p.role, health: 'ok' };
      }
    }),
  );
}
