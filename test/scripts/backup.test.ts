import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBackupArgs, restoreRefusal, targetTime } from '../../scripts/backup/args.ts';
import { parseInfo } from '../../scripts/backup/repository.ts';
import { archiveCommand, backupConfig, repositoryFromEnv } from '../../scripts/topology/pgBackRest.ts';

/**
 * `npm run backup`'s arguments and refusals, which need no topology: a refusal must come before anything is
 * touched. The drill itself runs against the CI topology as its own stage (.ci/run, `backup-drill`).
 */
const noTopology = mkdtempSync(join(tmpdir(), 'agora-backup-test-'));
afterAll(() => rmSync(noTopology, { recursive: true, force: true }));

function backup(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', './scripts/require-node-24.mjs', 'scripts/backup.ts', ...args],
      { env: { ...process.env, TOPOLOGY_DIR: noTopology }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const now = new Date('2026-06-01T12:00:00Z');
const earliest = new Date('2026-06-01T08:00:00Z');

describe('npm run backup arguments', () => {
  it('reads each verb with its options and refuses an unknown one with the usage', () => {
    expect(parseBackupArgs(['now'])).toEqual({ verb: 'now', type: 'full' });
    expect(parseBackupArgs(['--', 'now', '--type', 'incr'])).toEqual({ verb: 'now', type: 'incr' });
    expect(parseBackupArgs(['list', '--json'])).toEqual({ verb: 'list', json: true });
    expect(parseBackupArgs(['drill', '--posts', '40', '--seed', '100000'])).toEqual({ verb: 'drill', posts: 40, seed: 100_000 });
    expect(parseBackupArgs(['restore', '--to', '2026-06-01T10:00:00+02:00', '--yes'])).toEqual({
      verb: 'restore',
      to: new Date('2026-06-01T08:00:00Z'),
      yes: true,
    });
    expect(() => parseBackupArgs(['now', '--type', 'partial'])).toThrow('--type is full, diff or incr');
    expect(() => parseBackupArgs(['vacuum'])).toThrow('unknown command vacuum');
  });

  it('refuses a restore time without a zone, which would be read in whatever zone the machine is in', () => {
    expect(() => parseBackupArgs(['restore', '--to', '2026-06-01T10:00:00', '--yes'])).toThrow('not an ISO 8601 time with a zone');
    expect(() => parseBackupArgs(['restore', '--yes'])).toThrow('restore needs --to');
  });

  it('refuses a restore to the future, without --yes, or before the earliest backup, and lets one within reach go ahead', () => {
    expect(restoreRefusal(new Date('2026-06-01T12:00:01Z'), true, earliest, now)).toContain('is in the future');
    expect(restoreRefusal(new Date('2026-06-01T11:00:00Z'), false, earliest, now)).toContain('refused without --yes');
    expect(restoreRefusal(new Date('2026-06-01T07:59:59Z'), true, earliest, now)).toContain('before the earliest point');
    expect(restoreRefusal(new Date('2026-06-01T11:00:00Z'), true, null, now)).toContain('holds no backup');
    expect(restoreRefusal(new Date('2026-06-01T11:00:00Z'), true, earliest, now)).toBeNull();
  });

  it('gives Postgres and pgBackRest the target in UTC with its zone', () => {
    expect(targetTime(new Date('2026-06-01T10:00:00.250+02:00'))).toBe('2026-06-01 08:00:00.250+00');
  });
});

describe('npm run backup refusals, as a process', () => {
  it('exits 2 on a restore to the future, names it, and needs no topology to say so', async () => {
    const result = await backup('restore', '--to', '2999-01-01T00:00:00Z', '--yes');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is in the future');
    expect(result.stderr).toContain('nothing was touched');
  }, 60_000);

  it('exits 2 on a restore without --yes and tells what --yes would do', async () => {
    const result = await backup('restore', '--to', new Date(Date.now() - 60_000).toISOString());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('loses every write after it');
  }, 60_000);

  it('exits 2 with the usage on bad arguments, and 1 naming the missing topology on a good command', async () => {
    const bad = await backup('restore', '--to', 'yesterday', '--yes');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage: npm run backup');
    const list = await backup('list');
    expect(list.code).toBe(1);
    expect(list.stderr).toContain('no topology is up');
  }, 60_000);
});

describe('the pgBackRest configuration', () => {
  it('encrypts the repository with the key from the environment, keeps two full backups, and pushes WAL asynchronously', () => {
    const repo = repositoryFromEnv({ AGORA_BACKUP_CIPHER_PASS: 'k3y' }, '/srv/repo');
    const text = backupConfig('/srv/pg', repo, '/run/pg');
    expect(text).toContain('repo1-path=/srv/repo');
    expect(text).toContain('repo1-cipher-type=aes-256-cbc');
    expect(text).toContain('repo1-cipher-pass=k3y');
    expect(text).toContain('repo1-retention-full=2');
    expect(text).toContain('archive-async=y');
    expect(archiveCommand('/srv/pg', '/srv/pg/pg2')).toBe(
      'pgbackrest --config=/srv/pg/pgbackrest.conf --stanza=agora --pg1-path=/srv/pg/pg2 archive-push %p',
    );
  });

  it('generates a key when none is given, and points at an S3-compatible bucket when one is named', () => {
    const a = backupConfig('/srv/pg', repositoryFromEnv({}, '/srv/repo'), '/run/pg').match(/repo1-cipher-pass=(.*)/)?.[1];
    const b = backupConfig('/srv/pg', repositoryFromEnv({}, '/srv/repo'), '/run/pg').match(/repo1-cipher-pass=(.*)/)?.[1];
    expect(a).toHaveLength(44);
    expect(a).not.toBe(b);
    const s3 = backupConfig(
      '/srv/pg',
      repositoryFromEnv({ AGORA_BACKUP_S3_BUCKET: 'agora-wal', AGORA_BACKUP_S3_ENDPOINT: 'minio:9000' }, '/x'),
      '/run',
    );
    expect(s3).toContain('repo1-type=s3');
    expect(s3).toContain('repo1-s3-bucket=agora-wal');
    expect(s3).toContain('repo1-s3-endpoint=minio:9000');
    expect(s3).toContain('repo1-path=/agora');
  });

  it('reads the earliest restorable moment from pgBackRest’s info as the end of the oldest backup', () => {
    const info = parseInfo(
      JSON.stringify([
        {
          status: { code: 0, message: 'ok' },
          archive: [{ min: '000000010000000000000001', max: '00000002000000000000000A' }],
          backup: [
            { label: 'F1', type: 'full', timestamp: { start: 1000, stop: 1010 }, info: { size: 5, repository: { delta: 2 } } },
            { label: 'I1', type: 'incr', timestamp: { start: 2000, stop: 2003 }, info: { size: 6, repository: { delta: 1 } } },
          ],
        },
      ]),
    );
    expect(info.earliest).toEqual(new Date(1_010_000));
    expect(info.newestWal).toBe('00000002000000000000000A');
    expect(info.backups.map((b) => b.label)).toEqual(['F1', 'I1']);
  });
});
