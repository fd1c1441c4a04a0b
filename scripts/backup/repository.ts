import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PostgresState } from '../topology/postgresState.ts';
import { pgbackrest } from '../topology/pgBackRest.ts';

/** One backup in the repository, as `list` shows it. */
interface BackupEntry {
  label: string;
  type: string;
  start: Date;
  stop: Date;
  /** The database's size, and what the backup takes in the repository (compressed, only what changed for diff and incr). */
  databaseBytes: number;
  repositoryBytes: number;
}

export interface RepositoryInfo {
  status: string;
  backups: BackupEntry[];
  /** The end of the oldest backup: no earlier moment can be restored. Null without a backup. */
  earliest: Date | null;
  /** The newest WAL segment in the archive. */
  newestWal: string | null;
}

interface InfoJson {
  status: { code: number; message: string };
  archive: { min: string | null; max: string | null }[];
  backup: {
    label: string;
    type: string;
    timestamp: { start: number; stop: number };
    info: { size: number; repository: { delta: number } };
  }[];
}

const stateFile = (env: NodeJS.ProcessEnv) => join(resolve(env.TOPOLOGY_DIR ?? '.topology'), 'state.json');

/**
 * After a restore every postmaster runs with a new pid: state.json is made to name them, so that `topology
 * status` and `down` find exactly what runs (a stopped one's pid could be some other process's by now).
 */
export function recordPostmasters(env: NodeJS.ProcessEnv = process.env): void {
  const file = stateFile(env);
  const state = JSON.parse(readFileSync(file, 'utf8')) as { pids?: number[]; processes?: { pid: number; pidFile?: string }[] };
  const replaced = new Map<number, number>();
  for (const p of state.processes ?? []) {
    if (!p.pidFile) continue;
    const now = Number(readFileSync(p.pidFile, 'utf8').split('\n')[0]);
    if (now && now !== p.pid) replaced.set(p.pid, now);
    if (now) p.pid = now;
  }
  state.pids = (state.pids ?? []).map((pid) => replaced.get(pid) ?? pid);
  writeFileSync(file, JSON.stringify(state, null, 2));
}

/** The topology that `npm run topology -- up` recorded in TOPOLOGY_DIR (default .topology/). */
export function topologyPostgres(env: NodeJS.ProcessEnv = process.env): PostgresState & { baseUrl: string } {
  const dir = resolve(env.TOPOLOGY_DIR ?? '.topology');
  let state: { baseUrl?: string; postgres?: PostgresState; processes?: { role: string; name: string; pid: number }[] };
  try {
    state = JSON.parse(readFileSync(stateFile(env), 'utf8'));
  } catch {
    throw new Error(`no topology is up (no ${join(dir, 'state.json')}); \`npm run topology -- up\` first, or set TOPOLOGY_DIR`);
  }
  if (!state.postgres || !state.baseUrl)
    throw new Error(`the topology in ${dir} records no Postgres cluster (started before backups existed?)`);
  const patroni = new Map((state.processes ?? []).filter((p) => p.role === 'patroni').map((p) => [p.name, p.pid]));
  const members = state.postgres.members.map((m) => ({ ...m, patroniPid: patroni.get(m.name) }));
  return { ...state.postgres, members, baseUrl: state.baseUrl };
}

export function parseInfo(text: string): RepositoryInfo {
  const [stanza] = JSON.parse(text) as InfoJson[];
  if (!stanza) return { status: 'missing stanza', backups: [], earliest: null, newestWal: null };
  const backups = stanza.backup.map((b) => ({
    label: b.label,
    type: b.type,
    start: new Date(b.timestamp.start * 1000),
    stop: new Date(b.timestamp.stop * 1000),
    databaseBytes: b.info.size,
    repositoryBytes: b.info.repository.delta,
  }));
  return {
    status: stanza.status.message,
    backups,
    earliest: backups[0]?.stop ?? null,
    newestWal: stanza.archive.at(-1)?.max ?? null,
  };
}

export async function repositoryInfo(config: string): Promise<RepositoryInfo> {
  return parseInfo(await pgbackrest({ config }, ['info', '--output=json'], 60_000));
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** `list` for people: one line a backup, then what a restore can reach. */
export function describeInfo(info: RepositoryInfo, now: Date): string {
  const lines = info.backups.map(
    (b) =>
      `${b.label.padEnd(26)} ${b.type.padEnd(4)} ${b.start.toISOString()} -> ${b.stop.toISOString()}  database ` +
      `${megabytes(b.databaseBytes)}, in the repository ${megabytes(b.repositoryBytes)}`,
  );
  const reach = info.earliest
    ? `a restore can reach any moment from ${info.earliest.toISOString()} to the newest archived WAL ` +
      `(${info.newestWal}); now is ${now.toISOString()}, and the archive is at most 30 s behind it (archive_timeout)`
    : 'no backup yet: nothing can be restored';
  return [`stanza agora: ${info.status}`, ...lines, reach].join('\n');
}
