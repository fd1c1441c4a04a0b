/**
 * Witness verifier: `npm run verify -- <baseUrl> <projectSlug>`, the SDK's
 * verifyProject (sdk/src/verify.ts) as a command. Prints a summary; exits 1
 * on any failure and 2 on bad usage or an unreachable server.
 */
import { tileSummary, verifyProject } from '../sdk/src/verify.ts';

async function main(args: string[]): Promise<number> {
  const [base, slug] = args.filter((a) => a !== '--');
  if (!base || !slug) {
    console.error('usage: npm run verify -- <baseUrl> <projectSlug>');
    return 2;
  }
  try {
    const report = await verifyProject(base, slug);
    console.log(`project ${slug}: ${report.events} events, root ${report.rootHash}`);
    console.log(`checkpoints: ${report.checkpoints} in ${report.chains} chain(s)`);
    console.log(tileSummary(report));
    for (const failure of report.failures) console.log(`FAIL ${failure}`);
    console.log(
      report.failures.length === 0 ? 'OK: events, root, signatures, chains and proofs verify' : `${report.failures.length} failure(s)`,
    );
    return report.failures.length === 0 ? 0 : 1;
  } catch (error) {
    console.error(`cannot verify: ${(error as Error).message}`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
