import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { postgresBin } from '../chaos/services.ts';
import { pgbackrest } from '../topology/pgBackRest.ts';
import type { PostgresState } from '../topology/postgresState.ts';
import { targetTime } from './args.ts';
import { PatroniControl } from './patroni.ts';

/**
 * Files Patroni writes for each member (its port, its pg_hba, its dynamic settings): a backup holds the ones of
 * whichever member led when it was taken, so the restored member gets its own back.
 */
const MEMBER_FILES = ['postgresql.conf', 'postgresql.base.conf', 'pg_hba.conf', 'pg_ident.conf', 'patroni.dynamic.json'];

export interface RestoreReport {
  member: string;
  /** From the first change (Patroni paused) to the cluster complete again, writes acknowledged by Postgres. */
  durationMs: number;
  steps: { step: string; ms: number }[];
}

/**
 * Point-in-time recovery of the topology's Patroni cluster: the WAL up to now archived, Patroni paused, every
 * Postgres stopped, the leader's data folder restored to `to` (pgBackRest `--type=time`, promoted at the target
 * onto a new timeline), started, the other members' data removed so Patroni clones them from it, Patroni resumed.
 * The APIs and workers keep their addresses (the Postgres balancer) and reconnect by themselves.
 */
export async function restoreTo(pg: PostgresState, to: Date, say: (line: string) => void): Promise<RestoreReport> {
  const bin = postgresBin();
  if (!bin) throw new Error('no Postgres server binaries under /usr/lib/postgresql');
  const patroni = new PatroniControl(pg, bin);
  const started = Date.now();
  const steps: RestoreReport['steps'] = [];
  let mark = started;
  const step = (name: string) => {
    const now = Date.now();
    steps.push({ step: name, ms: now - mark });
    say(`restore: ${name} (${((now - mark) / 1000).toFixed(1)} s)`);
    mark = now;
  };
  const target = (await patroni.leader()) ?? pg.members.find((m) => existsSync(join(m.dataDir, 'PG_VERSION')));
  if (!target) throw new Error('no member with a data folder to restore into');
  const backupTarget = { config: pg.backupConfig, dataDir: target.dataDir, pgPort: target.pgPort };
  // check switches to a new WAL segment and waits until it is archived: every write until now can be replayed.
  await pgbackrest(backupTarget, ['check'], 120_000).catch((error: Error) => say(`restore: WAL not archived up to now (${error.message})`));
  step(`WAL archived up to now, from ${target.name}`);
  await patroni.setPaused(true);
  step('Patroni paused');
  const opts = readFileSync(join(target.dataDir, 'postmaster.opts'), 'utf8');
  const saved = join(pg.dir, `restore-${target.name}`);
  mkdirSync(saved, { recursive: true });
  for (const file of MEMBER_FILES) if (existsSync(join(target.dataDir, file))) copyFileSync(join(target.dataDir, file), join(saved, file));
  await Promise.all(pg.members.map((m) => patroni.stopPostgres(m)));
  step('every Postgres stopped');
  // Its Patroni frozen until the restored Postgres has promoted: even paused, Patroni rewrites a stopped member's
  // recovery settings (a standby.signal, pgBackRest's restore_command taken out of postgresql.auto.conf).
  const frozen = target.patroniPid;
  if (frozen) process.kill(frozen, 'SIGSTOP');
  try {
    await pgbackrest({ config: pg.backupConfig, dataDir: target.dataDir }, [
      'restore',
      '--delta',
      '--type=time',
      `--target=${targetTime(to)}`,
      '--target-action=promote',
    ]);
    for (const file of MEMBER_FILES) if (existsSync(join(saved, file))) copyFileSync(join(saved, file), join(target.dataDir, file));
    rmSync(saved, { recursive: true, force: true });
    step(`${target.name} restored to ${to.toISOString()}`);
    // As Patroni started it: the same options, after the binary and its data folder.
    const options = opts
      .trim()
      .split(/\s+(?=")/)
      .slice(3)
      .join(' ');
    await patroni.pgCtl([
      'start',
      '-D',
      target.dataDir,
      '-w',
      '-t',
      '600',
      '-l',
      join(pg.dir, `restore-${target.name}.log`),
      '-o',
      options,
    ]);
    await patroni.until('the restored member to reach the target and promote', 600_000, async () => {
      return (await patroni.sql(target, 'select pg_is_in_recovery()')) === 'f';
    });
  } finally {
    if (frozen) process.kill(frozen, 'SIGCONT');
  }
  step(`${target.name} replayed the WAL to the target and promoted`);
  await patroni.until(`Patroni to give ${target.name} the leader key`, 60_000, async () => (await patroni.leader())?.name === target.name);
  // Their data lies on the old timeline, past the target: Patroni removes it and clones the restored member.
  // (Removing the folders ourselves races Patroni, which writes into a paused member's folder again.)
  for (const member of pg.members.filter((m) => m !== target)) await patroni.reinitialize(member);
  await patroni.setPaused(false);
  step('other members re-cloned from the restored one; Patroni resumed');
  await patroni.untilReplicasServe(target, 300_000);
  step('a leader and two streaming replicas, one synchronous');
  return { member: target.name, durationMs: Date.now() - started, steps };
}
