import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, readdirSync, readFileSync, readlinkSync, type WriteStream } from 'node:fs';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A process's state letter, process group and terminal, from Linux's /proc; null where there is none (gone, or no /proc). */
function procStat(pid: number): { state: string; pgid: number; tty: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may hold spaces and parentheses itself: the fields that follow start after the last one.
    const [state = '', , pgid, , tty] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, pgid: Number(pgid), tty: Number(tty) };
  } catch {
    return null;
  }
}

/**
 * Whether a process exists (EPERM: it does, as another user's). A zombie does not count: it holds no port and
 * no file, and no signal ends it; the orphans of a dead keeper stay zombies until init gets round to them.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return procStat(pid)?.state !== 'Z';
}

/**
 * What a topology has running, found from outside it, whatever became of its keeper: every process of the
 * keeper's process group (`up` starts the keeper detached, so all it spawns shares its group unless it leaves
 * it), and every process working in a folder under the topology's root, where each engine is started. A
 * postmaster leaves the group (Patroni starts it in a session of its own) but works in its data folder. A
 * process on a terminal is no engine of the keeper's, which has none: someone's shell that went to look.
 */
export function leftovers(keeper: number, root: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      if (pid === process.pid) return false;
      const stat = procStat(pid);
      if (!stat || stat.state === 'Z') return false;
      if (stat.pgid === keeper) return true;
      if (stat.tty !== 0) return false;
      try {
        const cwd = readlinkSync(`/proc/${pid}/cwd`);
        return cwd === root || cwd.startsWith(`${root}/`);
      } catch {
        return false;
      }
    });
}

/** SIGTERM, then SIGKILL whatever still runs after `graceMs`; returns how many were running. */
export async function stopProcesses(pids: number[], graceMs: number): Promise<number> {
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // already gone
    }
  };
  const running = pids.filter(alive);
  for (const pid of running) signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && running.some(alive)) await pause(100);
  for (const pid of running.filter(alive)) signal(pid, 'SIGKILL');
  // Bounded: a process stuck in the kernel (uninterruptible I/O) outlives even SIGKILL for a while.
  const killed = Date.now() + 10_000;
  while (Date.now() < killed && running.some(alive)) await pause(50);
  return running.length;
}

/**
 * A child's stdout and stderr appended to one file, closed once the child's streams are: a pipe that ended
 * the file with the first of them to end would have the other's next line thrown as an unhandled error.
 */
export function logOutput(child: ChildProcess, file: string): WriteStream {
  const log = createWriteStream(file, { flags: 'a' });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  child.once('close', () => log.end());
  return log;
}

/** Whether a child of ours was started and has not exited. */
export function running(child: ChildProcess | null): child is ChildProcess {
  return child !== null && child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

/** A child of ours stopped: SIGTERM, SIGKILL if it has not exited after `graceMs`. */
export async function terminate(child: ChildProcess | null, graceMs: number): Promise<void> {
  if (!running(child)) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
