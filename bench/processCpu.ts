import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of the processes a scenario loads, from /proc/<pid>/stat (user +
 * system ticks): the service's own processes by pid, and every Postgres and
 * Redis process by name (Postgres forks one backend per connection).
 */
export type ProcessGroup = 'api' | 'worker' | 'postgres' | 'redis';
export type CpuTicks = Record<ProcessGroup, number>;

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** utime + stime of one process, or 0 once it is gone. */
function ticksOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces: fields count from the closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

function pidsNamed(name: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) out.push(Number(entry));
    } catch {
      // Gone between readdir and read.
    }
  }
  return out;
}

/**
 * A snapshot per pid, so a Postgres backend that starts during the window
 * counts from zero and one that ends keeps what it had used.
 */
export type CpuSnapshot = Map<number, { group: ProcessGroup; ticks: number }>;

export function snapshot(service: Record<'api' | 'worker', number[]>): CpuSnapshot {
  const out: CpuSnapshot = new Map();
  const add = (group: ProcessGroup, pids: number[]) => {
    for (const pid of pids) out.set(pid, { group, ticks: ticksOf(pid) });
  };
  add('api', service.api);
  add('worker', service.worker);
  add('postgres', pidsNamed('postgres'));
  add('redis', pidsNamed('redis-server'));
  return out;
}

/** Milliseconds of CPU per group between two snapshots. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): Record<ProcessGroup, number> {
  const ms: Record<ProcessGroup, number> = { api: 0, worker: 0, postgres: 0, redis: 0 };
  for (const [pid, { group, ticks }] of after) ms[group] += ((ticks - (before.get(pid)?.ticks ?? 0)) * 1000) / ticksPerSecond;
  return ms;
}
