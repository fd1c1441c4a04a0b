import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The working tree copied into a folder only its owner may enter (0700, as `mktemp -d` makes it and as a home
 * folder is), its dependencies linked in: where a new user's clone stands. Engines that run as another user
 * (Patroni and Postgres, as postgres) cannot enter it.
 */
export function privateClone(): { outer: string; dir: string } {
  const outer = mkdtempSync(join(tmpdir(), 'agora-private-'));
  if ((statSync(outer).mode & 0o777) !== 0o700) throw new Error(`${outer} is not 0700`);
  const dir = join(outer, 'agora');
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' });
  for (const file of files.split('\0').filter((name) => name && existsSync(name))) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(file, join(dir, file));
  }
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  return { outer, dir };
}

/** What `up` records first: its keeper's pid and the folder all the topology's data goes under. */
export interface UpState {
  keeper: number;
  root: string;
}

/** A process seen while a topology started: its pid, process group, command's name and the ports it listened on. */
export interface Seen {
  pid: number;
  pgid: number;
  name: string;
  ports: Set<number>;
}

/**
 * Watches, from outside, what an `up` starts: every process of the keeper's process group or naming the
 * topology's root on its command line (a postmaster, which Patroni starts in a session of its own), and the
 * group of each of those (a postmaster's backends), with the ports they listen on (`ss`). Read from `ps`,
 * not from the topology's own bookkeeping, so that what the script forgets is seen too.
 */
export function watchUp(stateFile: string): { seen: Map<number, Seen>; state(): UpState | undefined; stop(): Promise<void> } {
  const seen = new Map<number, Seen>();
  let stopped = false;
  let last: UpState | undefined;
  const look = async () => {
    let state: UpState;
    try {
      state = JSON.parse(readFileSync(stateFile, 'utf8')) as UpState;
    } catch {
      return;
    }
    last = state;
    const { stdout: ps } = await run('ps', ['-eo', 'pid=,pgid=,stat=,comm=,args=']);
    const rows = ps
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields.length >= 5 && !fields[2]?.startsWith('Z'))
      .map(([pid, pgid, , comm, ...args]) => ({ pid: Number(pid), pgid: Number(pgid), name: comm as string, args: args.join(' ') }));
    const groups = new Set([state.keeper, ...rows.filter((row) => row.args.includes(state.root)).map((row) => row.pgid)]);
    for (const row of rows.filter((r) => groups.has(r.pgid) || r.args.includes(state.root))) {
      if (!seen.has(row.pid)) seen.set(row.pid, { pid: row.pid, pgid: row.pgid, name: row.name, ports: new Set() });
    }
    const { stdout: ss } = await run('ss', ['-ltnpH']);
    for (const line of ss.split('\n')) {
      const port = Number(/:(\d+)\s/.exec(line)?.[1]);
      for (const [, pid] of line.matchAll(/pid=(\d+)/g)) seen.get(Number(pid))?.ports.add(port);
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await look().catch(() => {});
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    seen,
    state: () => last,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/** The pids of `pids` that still run (a zombie does not: it holds nothing and is only waiting to be reaped). */
export async function stillRunning(pids: number[]): Promise<number[]> {
  const { stdout } = await run('ps', ['-eo', 'pid=,stat=']);
  const running = new Set(
    stdout
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter(([, stat]) => stat && !stat.startsWith('Z'))
      .map(([pid]) => Number(pid)),
  );
  return pids.filter((pid) => running.has(pid));
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    const settle = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(2000, () => settle(false));
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
  });
}
