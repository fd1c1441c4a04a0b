import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Postmaster, RedisNode } from './engines.ts';

/**
 * CPU time of the processes a scenario loads, from /proc/<pid>/stat (user +
 * system ticks): the service's own processes by pid, each Postgres server
 * as its postmaster and every process it forked (one backend per
 * connection, WAL sender and receiver, startup/replay, writers) except the
 * backends and autovacuum workers of other databases (tests or benches of
 * others on a shared server), each Redis node by its pid (a shared Redis
 * counts whole: its CPU cannot be told apart per client).
 */
export type ProcessGroup = 'api' | 'worker' | 'pgPrimary' | 'pgReplica' | 'redisMasters' | 'redisReplicas';
export const processGroups: ProcessGroup[] = ['api', 'worker', 'pgPrimary', 'pgReplica', 'redisMasters', 'redisReplicas'];

/** What one snapshot watches. */
export interface Watched {
  api: number[];
  worker: number[];
  postmasters: Postmaster[];
  redis: RedisNode[];
}

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces), or null once the process is gone. */
function statOf(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** utime + stime; 0 once the process is gone. */
function ticksOf(fields: string[] | null): number {
  return fields ? Number(fields[11]) + Number(fields[12]) : 0;
}

/** Every process whose parent is one of `parents`, with its parent. */
function childrenOf(parents: Set<number>): [pid: number, parent: number][] {
  const out: [number, number][] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(statOf(entry)?.[1]);
    if (parents.has(parent)) out.push([Number(entry), parent]);
  }
  return out;
}

/**
 * The database a backend or autovacuum worker serves, from its title (`postgres: [cluster: ]user db host(port) state`);
 * null for the server's own processes and WAL senders (they serve the whole server).
 */
function databaseServed(pid: number): string | null {
  let title: string;
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return null;
  }
  const words = title.replace(/^postgres:\s+(\S+:\s+)?/, '').split(/\s+/);
  if (words[0] === 'walsender') return null;
  if (words[0] === 'autovacuum' && words[1] === 'worker') return words[2] ?? null;
  // A client backend: user, database, then the client's address (host(port), [local]).
  return words[2] !== undefined && /\(|\[local\]/.test(words[2]) ? (words[1] ?? null) : null;
}

/**
 * A snapshot per pid, so a Postgres backend that starts during the window
 * counts from zero and one that ends keeps what it had used. `label` names
 * the Redis node (its port) for the per-node table.
 */
export type CpuSnapshot = Map<number, { group: ProcessGroup; label: string; ticks: number }>;

export function snapshot(watched: Watched): CpuSnapshot {
  const out: CpuSnapshot = new Map();
  const add = (pid: number, group: ProcessGroup, label: string = group) => out.set(pid, { group, label, ticks: ticksOf(statOf(pid)) });
  for (const pid of watched.api) add(pid, 'api');
  for (const pid of watched.worker) add(pid, 'worker');
  const pgGroup = new Map(watched.postmasters.map(({ pid, role }) => [pid, role === 'primary' ? 'pgPrimary' : 'pgReplica'] as const));
  const database = new Map(watched.postmasters.map(({ pid, database }) => [pid, database]));
  for (const [pid, group] of pgGroup) add(pid, group);
  for (const [pid, parent] of childrenOf(new Set(pgGroup.keys()))) {
    const served = databaseServed(pid);
    if (served === null || served === database.get(parent)) add(pid, pgGroup.get(parent) as ProcessGroup);
  }
  for (const node of watched.redis) add(node.pid, node.role === 'master' ? 'redisMasters' : 'redisReplicas', String(node.port));
  return out;
}

/** Milliseconds of CPU between two snapshots, per group and per label. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): { groups: Record<ProcessGroup, number>; labels: Map<string, number> } {
  const groups = Object.fromEntries(processGroups.map((group) => [group, 0])) as Record<ProcessGroup, number>;
  const labels = new Map<string, number>();
  for (const [pid, { group, label, ticks }] of after) {
    const ms = ((ticks - (before.get(pid)?.ticks ?? 0)) * 1000) / ticksPerSecond;
    groups[group] += ms;
    labels.set(label, (labels.get(label) ?? 0) + ms);
  }
  return { groups, labels };
}
