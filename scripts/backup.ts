/**
 * `npm run backup -- now | list | check | restore --to <ISO> --yes | drill`: pgBackRest for the topology that
 * `npm run topology -- up` holds (TOPOLOGY_DIR, default .topology/), as docs/operations.md ("Backups and
 * point-in-time recovery") tells it. Arguments and refusals are settled before anything runs: a refusal exits 2
 * and touches nothing. A failure exits 1.
 */
import { parseBackupArgs, restoreRefusal, USAGE, type BackupCommand } from './backup/args.ts';
import { describeInfo, recordPostmasters, repositoryInfo, topologyPostgres } from './backup/repository.ts';
import { restoreTo } from './backup/restore.ts';
import { refreshServices } from './backup/services.ts';
import { pgbackrest } from './topology/pgBackRest.ts';
import { PatroniControl } from './backup/patroni.ts';
import { postgresBin } from './chaos/services.ts';

async function leaderTarget(pg: ReturnType<typeof topologyPostgres>) {
  const leader = await new PatroniControl(pg, postgresBin() ?? '').leader();
  if (!leader) throw new Error('the Patroni cluster has no leader to back up from');
  return { config: pg.backupConfig, dataDir: leader.dataDir, pgPort: leader.pgPort };
}

async function execute(command: BackupCommand): Promise<number> {
  const refusal = command.verb === 'restore' ? restoreRefusal(command.to, command.yes, undefined, new Date()) : null;
  if (refusal) {
    console.error(`backup: ${refusal}`);
    return 2;
  }
  const pg = topologyPostgres();
  switch (command.verb) {
    case 'now': {
      await pgbackrest(await leaderTarget(pg), ['backup', `--type=${command.type}`]);
      const newest = (await repositoryInfo(pg.backupConfig)).backups.at(-1);
      console.log(`backup: ${newest?.label} (${command.type}), ${newest?.start.toISOString()} -> ${newest?.stop.toISOString()}`);
      return 0;
    }
    case 'list': {
      const info = await repositoryInfo(pg.backupConfig);
      console.log(command.json ? JSON.stringify({ ...info, now: new Date() }, null, 2) : describeInfo(info, new Date()));
      return 0;
    }
    case 'check':
      await pgbackrest(await leaderTarget(pg), ['check'], 120_000);
      console.log(`backup: stanza agora and its WAL archive verified (${(await repositoryInfo(pg.backupConfig)).newestWal} archived)`);
      return 0;
    case 'restore': {
      const info = await repositoryInfo(pg.backupConfig);
      const refusal = restoreRefusal(command.to, command.yes, info.earliest, new Date());
      if (refusal) {
        console.error(`backup: ${refusal}`);
        return 2;
      }
      const report = await restoreTo(pg, command.to, (line) => console.log(line));
      recordPostmasters();
      await refreshServices((line) => console.log(line));
      console.log(`backup: restored to ${command.to.toISOString()} on ${report.member} in ${(report.durationMs / 1000).toFixed(1)} s`);
      return 0;
    }
    case 'drill': {
      // Loaded only here: the drill's HTTP client and ledger verifier cost every other verb a second or two to load.
      const { runDrill } = await import('./backup/drill.ts');
      return runDrill(pg, command, (line) => console.log(`${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`));
    }
  }
}

const started = performance.now();
let command: BackupCommand;
try {
  command = parseBackupArgs(process.argv.slice(2));
} catch (error) {
  console.error(`backup: ${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
try {
  process.exitCode = await execute(command);
} catch (error) {
  console.error(`backup: ${(error as Error).message}`);
  process.exitCode = 1;
}
