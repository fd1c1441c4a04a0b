import { execFileSync } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';

/** The server log of the local Postgres cluster serving `url` (Debian's pg_lsclusters: version, cluster, port, status, owner, data directory, log file). */
export function serverLogOf(url: string): string {
  const port = new URL(url).port || '5432';
  const cluster = execFileSync('pg_lsclusters', ['--no-header'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((fields) => fields[2] === port);
  if (!cluster?.[6]) throw new Error(`no local Postgres cluster listens on port ${port}: this test reads that cluster's server log`);
  return cluster[6];
}

/** What a server log holds from a moment on: its size then, and a reader of what was appended since. */
export async function logFrom(path: string): Promise<() => Promise<string>> {
  const before = (await stat(path)).size;
  return async () => (await readFile(path)).subarray(before).toString('utf8');
}

/** Where an entry of the server log begins: its timestamp, zone and process id (Debian's log_line_prefix `%m [%p] `). */
const ENTRY = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \S+ \[\d+\] /m;

/**
 * The messages of a stretch of server log written by sessions on `database`
 * (prefix `user@database `), each whole (a statement spans several lines),
 * without their prefix: `LOG:  statement: ...`, `DETAIL:  parameters: ...`.
 */
export function messagesOn(log: string, database: string): string[] {
  const starts: number[] = [];
  const pattern = new RegExp(ENTRY.source, 'gm');
  for (let match = pattern.exec(log); match; match = pattern.exec(log)) starts.push(match.index);
  const session = `@${database} `;
  return starts
    .map((start, i) => log.slice(start, starts[i + 1] ?? log.length).replace(ENTRY, ''))
    .filter((entry) => entry.split(' ', 1)[0]?.endsWith(session.trim()))
    .map((entry) => entry.slice(entry.indexOf(session) + session.length));
}
