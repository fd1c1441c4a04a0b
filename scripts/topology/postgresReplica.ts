import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { asClusterOwner, freePort, postgresBin } from '../chaos/services.ts';

const run = promisify(execFile);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A primary and a streaming replica of it, clusters of their own on free
 * loopback ports: initdb, then pg_basebackup -R (the replica streams from
 * the primary as any standby does). Everything runs asynchronously, so a
 * service under test in this process keeps serving meanwhile.
 */
export interface StreamingPair {
  /** The folder holding both clusters' data and logs. */
  readonly dir: string;
  readonly ports: { primary: number; replica: number };
  /** The postmaster pids running now (from postmaster.pid). */
  pids(): number[];
  /** postgres:// URL of `database` on the primary and on the replica. */
  primaryUrl(database: string): string;
  replicaUrl(database: string): string;
  /** SQL through psql; the rows as lines of `|`-separated fields. */
  sql(on: 'primary' | 'replica', statement: string, database?: string): Promise<string>;
  /** Returns once the replica has replayed everything the primary has written so far. */
  caughtUp(): Promise<void>;
  /** pg_wal_replay_pause(), and waits until replay actually stands still. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Stops the primary (fast: clean, immediate: as a crash) and starts it again; the replica reconnects by itself. */
  restartPrimary(mode: 'fast' | 'immediate'): Promise<void>;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** Stops both clusters and removes their files. */
  stop(): Promise<void>;
}

export async function startStreamingPair(): Promise<StreamingPair> {
  const bin = postgresBin();
  if (!bin) throw new Error('no Postgres server binaries (initdb) under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'agora-replica-'));
  // initdb refuses root: the clusters belong to the postgres user, who must own the folder.
  if (process.getuid?.() === 0) await run('chown', ['postgres:postgres', dir]);
  // In the clusters' folder: the postgres user may not enter the caller's.
  const asOwner = async (command: string, args: string[]) => {
    const [file, argv] = asClusterOwner(join(bin, command), args);
    await run(file, argv, { cwd: dir });
  };
  const ports = { primary: await freePort(), replica: await freePort() };
  const data = { primary: join(dir, 'primary'), replica: join(dir, 'replica') };
  const start = (which: 'primary' | 'replica') => {
    // fsync off: throwaway clusters on a machine other tests share.
    const options =
      `-p ${ports[which]} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c wal_level=replica -c ` +
      'shared_preload_libraries=pg_stat_statements';
    return asOwner('pg_ctl', ['-D', data[which], '-l', join(dir, `${which}.log`), '-o', options, '-w', 'start']);
  };
  const stop = (which: 'primary' | 'replica', mode: 'fast' | 'immediate' = 'fast') =>
    asOwner('pg_ctl', ['-D', data[which], '-m', mode, '-w', 'stop']);

  // initdb's pg_hba.conf with -A trust already lets loopback connections replicate.
  await asOwner('initdb', ['-D', data.primary, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  await start('primary');
  await asOwner('pg_basebackup', [
    '-D',
    data.replica,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
    '--no-sync',
    '-h',
    '127.0.0.1',
    '-p',
    String(ports.primary),
    '-U',
    'postgres',
  ]);
  await start('replica');

  const url = (which: 'primary' | 'replica', database: string) => `postgres://postgres@127.0.0.1:${ports[which]}/${database}`;
  const sql = async (on: 'primary' | 'replica', statement: string, database = 'postgres') => {
    const { stdout } = await run(join(bin, 'psql'), [
      '-X',
      '-A',
      '-t',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      '127.0.0.1',
      '-p',
      String(ports[on]),
      '-U',
      'postgres',
      '-d',
      database,
      '-c',
      statement,
    ]);
    return stdout.trim();
  };
  const until = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 400; i++) {
      if (await check()) return;
      await pause(25);
    }
    throw new Error(`replica: ${what} did not happen within 10 s`);
  };
  const pid = (which: 'primary' | 'replica') => {
    const file = join(data[which], 'postmaster.pid');
    return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : 0;
  };
  return {
    dir,
    ports,
    pids: () => [pid('primary'), pid('replica')].filter((n) => n > 0),
    primaryUrl: (database) => url('primary', database),
    replicaUrl: (database) => url('replica', database),
    sql,
    caughtUp: async () => {
      const written = await sql('primary', 'select pg_current_wal_lsn()');
      await until('catching up', async () => (await sql('replica', `select pg_last_wal_replay_lsn() >= '${written}'`)) === 't');
    },
    pauseReplay: async () => {
      await sql('replica', 'select pg_wal_replay_pause()');
      await until('pausing', async () => (await sql('replica', 'select pg_get_wal_replay_pause_state()')) === 'paused');
    },
    resumeReplay: async () => {
      await sql('replica', 'select pg_wal_replay_resume()');
    },
    restartPrimary: async (mode) => {
      await stop('primary', mode);
      await start('primary');
    },
    stopReplica: () => stop('replica', 'immediate'),
    startReplica: () => start('replica'),
    stop: async () => {
      await stop('replica').catch(() => {});
      await stop('primary').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
