/** The topology's Postgres as state.json records it for `npm run backup` (scripts/backup.ts), which runs outside the keeper. */
export interface PostgresState {
  /** The Patroni cluster's folder: its sockets, pgBackRest's configuration and spool. */
  dir: string;
  backupConfig: string;
  members: { name: string; dataDir: string; pgPort: number; restPort: number; patroniPid?: number }[];
}
