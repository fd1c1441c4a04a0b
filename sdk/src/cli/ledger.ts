import { readFile, writeFile } from 'node:fs/promises';
import { exportLedger, type LedgerExport } from '../ledgerExport.ts';
import { tileSummary, verifyExport, verifyProject } from '../verify.ts';

/**
 * `agora verify` and `agora export` (docs/witness.md): the witness's check
 * of a live project or of an export file, and the file itself. `print`
 * writes the human line(s) or, under --json, the data.
 */
type Print = (human: string, data: unknown) => void;

/** A live project, or an export file with no network; true when every check holds. */
type VerifyTarget = { file: string } | { url: string; projectSlug: string };

export async function verifyCommand(target: VerifyTarget, print: Print): Promise<boolean> {
  const report =
    'file' in target
      ? await verifyExport(JSON.parse(await readFile(target.file, 'utf8')) as LedgerExport)
      : await verifyProject(target.url, target.projectSlug);
  const summary =
    `${report.projectSlug}: ${report.events} events, root ${report.rootHash}; ${report.checkpoints} checkpoints in ` +
    `${report.chains} chain(s); ${report.profiles} signed profile revision(s)`;
  print(
    [
      summary,
      tileSummary(report),
      ...report.failures.map((f) => `FAIL ${f}`),
      report.failures.length === 0 ? 'OK' : `${report.failures.length} failure(s)`,
    ].join('\n'),
    report,
  );
  return report.failures.length === 0;
}

/** Writes the project's export to `out` (default `<slug>.agora-ledger.json`). */
export async function exportCommand(url: string, projectSlug: string, out: string | undefined, print: Print): Promise<void> {
  const file = await exportLedger(url, projectSlug);
  const path = out ?? `${projectSlug}.agora-ledger.json`;
  await writeFile(path, `${JSON.stringify(file, null, 1)}\n`);
  const tiles = Object.keys(file.tiles.tiles).length;
  print(
    `${path}: ${file.events.length} events, ${file.checkpoints.length} checkpoints, ${file.profiles.length} profile ` +
      `revisions, ${Object.keys(file.keys).length} keys, ${tiles} tiles`,
    { file: path, events: file.events.length, checkpoints: file.checkpoints.length, tiles },
  );
}
