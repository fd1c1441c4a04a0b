import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { asClusterOwner } from '../chaos/services.ts';

const run = promisify(execFile);

/** The stanza every deployment of Agora archives under: one Postgres cluster, whoever leads it. */
const STANZA = 'agora';

/** What a pgBackRest command needs to reach the cluster: its configuration and the member that leads now. */
export interface BackupTarget {
  config: string;
  /** The data folder and port of the member a backup or check is taken from (the leader), or restored into. */
  dataDir: string;
  pgPort: number;
}

/** The configuration file's path for a cluster folder: every member's archive_command names it. */
export const backupConfigPath = (clusterDir: string) => join(clusterDir, 'pgbackrest.conf');

/**
 * The archive_command of one member. Each names its own data folder: an asynchronous push reads the
 * archive_status of the member it runs for, and every member may lead after a failover.
 */
export function archiveCommand(clusterDir: string, dataDir: string): string {
  return `pgbackrest --config=${backupConfigPath(clusterDir)} --stanza=${STANZA} --pg1-path=${dataDir} archive-push %p`;
}

export interface RepositorySettings {
  /** A local folder, or (with s3) the path inside the bucket. */
  path: string;
  /** AES-256 key for the repository; without it one is generated (and kept only in the configuration file). */
  cipherPass?: string;
  retentionFull: number;
  retentionDiff: number;
  /** An S3-compatible repository instead of the folder: `PGBACKREST_REPO1_S3_*` in the docs (docs/operations.md). */
  s3?: { bucket: string; endpoint: string; region: string; key: string; keySecret: string; uriStyle?: 'host' | 'path' };
}

/** The repository as the environment configures it (docs/operations.md, "Backups"); the folder is the default. */
export function repositoryFromEnv(env: NodeJS.ProcessEnv, defaultPath: string): RepositorySettings {
  const s3 = env.AGORA_BACKUP_S3_BUCKET
    ? {
        bucket: env.AGORA_BACKUP_S3_BUCKET,
        endpoint: env.AGORA_BACKUP_S3_ENDPOINT ?? 's3.amazonaws.com',
        region: env.AGORA_BACKUP_S3_REGION ?? 'us-east-1',
        key: env.AGORA_BACKUP_S3_KEY ?? '',
        keySecret: env.AGORA_BACKUP_S3_KEY_SECRET ?? '',
        uriStyle: env.AGORA_BACKUP_S3_URI_STYLE === 'path' ? ('path' as const) : ('host' as const),
      }
    : undefined;
  return {
    path: env.AGORA_BACKUP_REPO_PATH ?? (s3 ? '/agora' : defaultPath),
    cipherPass: env.AGORA_BACKUP_CIPHER_PASS || undefined,
    retentionFull: Number(env.AGORA_BACKUP_RETENTION_FULL ?? 2),
    retentionDiff: Number(env.AGORA_BACKUP_RETENTION_DIFF ?? 6),
    ...(s3 ? { s3 } : {}),
  };
}

/** pgbackrest.conf: the repository, encrypted, with its retention; spool, logs and locks in the cluster folder. */
export function backupConfig(clusterDir: string, repo: RepositorySettings, socketDir: string): string {
  const folder = join(clusterDir, 'pgbackrest');
  const s3 = repo.s3
    ? [
        'repo1-type=s3',
        `repo1-s3-bucket=${repo.s3.bucket}`,
        `repo1-s3-endpoint=${repo.s3.endpoint}`,
        `repo1-s3-region=${repo.s3.region}`,
        `repo1-s3-key=${repo.s3.key}`,
        `repo1-s3-key-secret=${repo.s3.keySecret}`,
        `repo1-s3-uri-style=${repo.s3.uriStyle ?? 'host'}`,
      ]
    : [];
  return [
    '[global]',
    `repo1-path=${repo.path}`,
    ...s3,
    'repo1-cipher-type=aes-256-cbc',
    `repo1-cipher-pass=${repo.cipherPass ?? randomBytes(32).toString('base64')}`,
    `repo1-retention-full=${repo.retentionFull}`,
    `repo1-retention-diff=${repo.retentionDiff}`,
    // Postgres waits for no network or disk of the repository's: the push returns once the WAL is in the spool.
    'archive-async=y',
    `spool-path=${join(folder, 'spool')}`,
    `log-path=${join(folder, 'log')}`,
    `lock-path=${join(folder, 'lock')}`,
    'log-level-console=warn',
    'log-level-file=info',
    'compress-type=lz4',
    // A backup starts at once (an immediate checkpoint), not at the next scheduled one.
    'start-fast=y',
    'process-max=2',
    '',
    `[${STANZA}]`,
    `pg1-socket-path=${socketDir}`,
    'pg1-user=postgres',
    '',
  ].join('\n');
}

/** Writes the configuration and makes the folders it names, for the user Postgres runs as. */
export function prepareRepository(clusterDir: string, repo: RepositorySettings, socketDir: string): string {
  const file = backupConfigPath(clusterDir);
  const folder = join(clusterDir, 'pgbackrest');
  for (const sub of ['spool', 'log', 'lock']) mkdirSync(join(folder, sub), { recursive: true, mode: 0o750 });
  if (!repo.s3) mkdirSync(repo.path, { recursive: true, mode: 0o750 });
  // The key is in it: readable by the owner alone.
  writeFileSync(file, backupConfig(clusterDir, repo, socketDir), { mode: 0o600 });
  chmodSync(file, 0o600);
  if (process.getuid?.() === 0) {
    execFileSync('chown', ['-R', 'postgres:postgres', folder, file]);
    if (!repo.s3) execFileSync('chown', ['-R', 'postgres:postgres', repo.path]);
  }
  return file;
}

/** pgbackrest as the user Postgres runs as (it refuses root for most commands, and the files are that user's). */
export async function pgbackrest(
  target: Pick<BackupTarget, 'config'> & Partial<BackupTarget>,
  args: string[],
  timeoutMs = 600_000,
): Promise<string> {
  const options = [
    `--config=${target.config}`,
    `--stanza=${STANZA}`,
    ...(target.dataDir ? [`--pg1-path=${target.dataDir}`] : []),
    ...(target.pgPort ? [`--pg1-port=${target.pgPort}`] : []),
  ];
  const [file, argv] = asClusterOwner('pgbackrest', [...options, ...args]);
  try {
    const { stdout } = await run(file, argv, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, cwd: '/' });
    return stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`pgbackrest ${args[0]} failed: ${(stderr || stdout || (error as Error).message).trim()}`);
  }
}

/** The stanza created on the leader and its first full backup: what `topology up` leaves behind. */
export async function initialBackup(target: BackupTarget): Promise<void> {
  await pgbackrest(target, ['stanza-create']);
  await pgbackrest(target, ['backup', '--type=full']);
}
