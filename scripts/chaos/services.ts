import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openOrm } from '../../src/db/orm.ts';

/** The first port the kernel hands to outgoing connections (Linux's ip_local_port_range; 32768 by default). */
function ephemeralFloor(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

const handedOut = new Set<number>();

/**
 * A port free now, for an engine that binds it later. Taken below the
 * ephemeral range: a port the kernel picked (listen on 0) can meanwhile be
 * given to any outgoing connection as its local port, and a postmaster of
 * the topology then failed to bind it (a Redis Cluster started beside it).
 * Never the same port twice in one process.
 */
export async function freePort(): Promise<number> {
  const floor = Math.max(10_001, ephemeralFloor());
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (floor - 10_000));
    if (handedOut.has(port)) continue;
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    handedOut.add(port);
    return port;
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pid of the redis-server answering on `port`, if one does. */
function pidOn(port: number): number | null {
  try {
    const info = execFileSync('redis-cli', ['-p', String(port), 'info', 'server'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return Number(/process_id:(\d+)/.exec(info)?.[1] ?? Number.NaN) || null;
  } catch {
    return null;
  }
}

/** A redis-server of its own (the suite's, or a test's): append-only, on a free loopback port, in a temp folder. */
export class OwnRedis {
  private child: ChildProcess | null = null;
  readonly dir = mkdtempSync(join(tmpdir(), 'agora-chaos-redis-'));
  readonly port: number;
  private readonly evictionPolicy: string;
  /** More redis-server arguments (a cluster node's, say). */
  private readonly extraArgs: string[];

  constructor(port: number, evictionPolicy = 'noeviction', extraArgs: string[] = []) {
    this.port = port;
    this.evictionPolicy = evictionPolicy;
    this.extraArgs = extraArgs;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The running redis-server's pid, if it runs. */
  get pid(): number | undefined {
    return this.child && this.child.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  /** Starts the server; a no-op while it runs (a second one could not have the port, and the first would be lost track of). */
  async start(): Promise<void> {
    if (this.pid !== undefined) return;
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
      '--maxmemory-policy',
      this.evictionPolicy,
      ...this.extraArgs,
    ];
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    this.child = child;
    for (let i = 0; i < 100; i++) {
      // Exited: the port was taken (redis-server refuses to start), or it could not start at all.
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`redis-server on port ${this.port} exited`);
      const answering = pidOn(this.port);
      if (answering === child.pid) return;
      // Another process's server answers there (it took the port before ours could): not ours to use.
      if (answering !== null) throw new Error(`another redis-server (pid ${answering}) answers on port ${this.port}`);
      await pause(50);
    }
    throw new Error('redis-server did not start');
  }

  /** Stopped (cleanly) for `ms`, then started again: an outage. */
  async outage(ms: number): Promise<void> {
    await this.stop();
    await pause(ms);
    await this.start();
  }

  /** A clean restart: SIGTERM (Redis flushes its append-only file), then start again. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    // Already gone: exited, or killed by a signal (killNow).
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  }

  killNow(): void {
    this.child?.kill('SIGKILL');
  }

  cleanUp(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * An OwnRedis on a free port. redis-server cannot bind port 0 and report it
 * (0 means no TCP at all), so the port is picked ahead; a port another
 * process took meanwhile is found out (start() accepts only its own server)
 * and another one tried.
 */
export async function startOwnRedis(evictionPolicy = 'noeviction', extraArgs: string[] = []): Promise<OwnRedis> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = new OwnRedis(await freePort(), evictionPolicy, extraArgs);
    try {
      await server.start();
      return server;
    } catch {
      server.killNow();
      server.cleanUp();
    }
  }
  throw new Error('no redis-server of our own after 5 ports');
}

/** What the suite can do to Postgres: restart a cluster of its own, or only cut connections of a shared one. */
export interface ChaosPostgres {
  url: string;
  kind: 'own cluster' | 'shared server';
  restart(mode: 'fast' | 'immediate'): Promise<void>;
  /** Away for `ms` (an own cluster stopped; a shared server has its backends terminated until then), then back. */
  outage(ms: number): Promise<void>;
  stop(): Promise<void>;
}

export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) if (existsSync(join(root, version, 'bin', 'initdb'))) return join(root, version, 'bin');
  return null;
}

/** initdb refuses to run as root; the suite then runs the cluster as the postgres user. */
export function asClusterOwner(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

async function ownCluster(port: number): Promise<ChaosPostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('no initdb');
  const dir = mkdtempSync(join(tmpdir(), 'agora-chaos-pg-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
  const run = (command: string, args: string[]) => {
    const [file, argv] = asClusterOwner(join(bin, command), args);
    execFileSync(file, argv, { stdio: 'pipe' });
  };
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on`;
  const start = () => run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/agora_chaos`,
    kind: 'own cluster',
    restart: async (mode) => {
      run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      start();
    },
    outage: async (ms) => {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      await pause(ms);
      start();
    },
    stop: async () => {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The shared server: a fresh database, and "restarts" that terminate every backend connected to it. */
async function sharedServer(baseUrl: string): Promise<ChaosPostgres> {
  const admin = new URL(baseUrl);
  admin.pathname = '/postgres';
  const orm = await openOrm(admin.toString(), { poolMax: 1 });
  await orm.em.fork().execute('drop database if exists agora_chaos with (force)');
  const url = new URL(baseUrl);
  url.pathname = '/agora_chaos';
  return {
    url: url.toString(),
    kind: 'shared server',
    restart: async () => {
      await orm.em
        .fork()
        .execute("select pg_terminate_backend(pid) from pg_stat_activity where datname = 'agora_chaos' and pid <> pg_backend_pid()");
    },
    outage: async (ms) => {
      await orm.em.fork().execute('alter database agora_chaos allow_connections false');
      await orm.em
        .fork()
        .execute("select pg_terminate_backend(pid) from pg_stat_activity where datname = 'agora_chaos' and pid <> pg_backend_pid()");
      await pause(ms);
      await orm.em.fork().execute('alter database agora_chaos allow_connections true');
    },
    stop: async () => {
      await orm.em.fork().execute('drop database if exists agora_chaos with (force)');
      await orm.close();
    },
  };
}

export async function chaosPostgres(baseUrl: string): Promise<ChaosPostgres> {
  try {
    return await ownCluster(await freePort());
  } catch (error) {
    console.log(
      `own Postgres cluster impossible here (${(error as Error).message.split('\n')[0]}); terminating backends of a shared server instead`,
    );
    return sharedServer(baseUrl);
  }
}
