// @ts-check
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, globSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import config from '../stryker.config.mjs';
import vitestConfig from '../vitest.mutation.config.ts';

/**
 * `npm run mutation`: StrykerJS one module at a time (`--mutate`), so that
 * `thresholds.break` (85) holds for each module and not only for their sum,
 * and only for the modules whose fingerprint differs from the one stored in
 * stryker/baseline.json. A module's fingerprint hashes its source and every
 * file it imports; every test of the mutation run (vitest.mutation.config.ts)
 * that imports it, directly or through other files, and everything those
 * tests import; package-lock.json (the versions of Stryker, Vitest, the
 * libraries); and the run's configuration files. Each run prints, per
 * module, whether it runs or is skipped and why, and re-checks every score
 * stored in the baseline against the floor, run or not.
 *
 * `npm run mutation -- --all` runs every module, `npm run mutation --
 * src/ledger/leaf.ts` the modules named. A passing run records the module's
 * score, fingerprint (as it was when its run started), date and commit in
 * the baseline (commit it); the run exits 1 if a module run fails or is
 * below the floor, or if a stored score is below it.
 */
const BASELINE = 'stryker/baseline.json';
const SHARED = [
  'package-lock.json',
  'stryker.config.mjs',
  'vitest.mutation.config.ts',
  'tsconfig.mutation.json',
  'stryker/luaScriptIgnorer.mjs',
  'test/support/mutationSetup.ts',
];
const detected = new Set(['Killed', 'Timeout']);
const scored = new Set(['Killed', 'Timeout', 'Survived', 'NoCoverage']);
const RELATIVE_IMPORT = /(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g;

/** The file and everything it imports through relative paths (static, side-effect and dynamic imports). */
function closure(start, seen = new Set()) {
  if (seen.has(start) || !existsSync(start)) return seen;
  seen.add(start);
  if (!/\.(?:ts|mjs)$/.test(start)) return seen;
  for (const [, target] of readFileSync(start, 'utf8').matchAll(RELATIVE_IMPORT))
    closure(relative('.', resolve(dirname(start), target)), seen);
  return seen;
}

const shared = new Set(SHARED.flatMap((file) => [...closure(file)]));
const mutationTests = globSync(vitestConfig.test?.include ?? []).map((test) => ({ test, reaches: closure(test) }));

/** What a module's fingerprint hashes: its own closure, that of every mutation test reaching it, and the shared files. */
function fingerprintFiles(module) {
  const files = new Set([...shared, ...closure(module)]);
  for (const { reaches } of mutationTests) if (reaches.has(module)) for (const file of reaches) files.add(file);
  return files;
}

function fingerprint(module) {
  const hash = createHash('sha256');
  for (const file of [...fingerprintFiles(module)].sort()) hash.update(`${file}\n`).update(readFileSync(file));
  return hash.digest('hex');
}

/** Score = detected / (detected + survived + no coverage); ignored (equivalent, Lua) and non-compiling mutants are not scored. */
function scoreOf(report, module) {
  const mutants = report.files[module]?.mutants ?? [];
  const total = mutants.filter((m) => scored.has(m.status)).length;
  const killed = mutants.filter((m) => detected.has(m.status)).length;
  return {
    mutants: total,
    ignored: mutants.filter((m) => m.status === 'Ignored').length,
    score: total === 0 ? 100 : Math.round((10_000 * killed) / total) / 100,
  };
}

const baseline = existsSync(BASELINE) ? JSON.parse(readFileSync(BASELINE, 'utf8')) : {};
const modules = /** @type {string[]} */ (config.mutate);
const args = process.argv.slice(2);
const named = args.filter((arg) => !arg.startsWith('--'));
const unknown = named.filter((module) => !modules.includes(module));
if (unknown.length > 0) throw new Error(`not a mutated module (stryker.config.mjs): ${unknown.join(', ')}`);
const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || 'unknown';
const floor = config.thresholds?.break ?? 85;
const failed = [];

/** Why a module runs (a string), or why it is skipped (`skip`). */
function decide(module) {
  const stored = baseline[module];
  const since = stored ? ` since ${stored.commit} (${stored.date})` : '';
  if (named.length > 0) return named.includes(module) ? { run: 'named on the command line' } : { skip: 'not named on the command line' };
  if (args.includes('--all')) return { run: '--all' };
  if (!stored) return { run: `no entry in ${BASELINE}` };
  if (stored.fingerprint !== fingerprint(module)) return { run: `fingerprint changed${since}` };
  return { skip: `fingerprint unchanged${since}, ${fingerprintFiles(module).size} files` };
}

const plan = modules.map((module) => ({ module, ...decide(module) }));
console.log(`mutation: ${mutationTests.length} test files in vitest.mutation.config.ts; per module:`);
for (const { module, run, skip } of plan) console.log(run ? `  run   ${module}: ${run}` : `  skip  ${module}: ${skip}`);
const toRun = plan.filter((entry) => entry.run).map((entry) => entry.module);
console.log(`mutation: ${toRun.length} to run, ${modules.length - toRun.length} skipped`);

const reportFile = config.jsonReporter?.fileName ?? 'reports/mutation/mutation.json';
for (const module of toRun) {
  const started = Date.now();
  const before = fingerprint(module);
  console.log(`mutation: ${module}`);
  // Removed first, so a report read below is this run's (Stryker writes it even when the module is below the floor).
  rmSync(reportFile, { force: true });
  const run = spawnSync('npx', ['stryker', 'run', '--mutate', module], { stdio: 'inherit' });
  const seconds = Math.round((Date.now() - started) / 1000);
  if (!existsSync(reportFile)) {
    console.log(`mutation: ${module}: Stryker failed before reporting (exit ${run.status}), ${seconds} s`);
    failed.push(`${module} ran: Stryker failed before reporting (exit ${run.status})`);
    continue;
  }
  const result = scoreOf(JSON.parse(readFileSync(reportFile, 'utf8')), module);
  console.log(`mutation: ${module}: ${result.score}% of ${result.mutants} scored mutants, ${seconds} s, Stryker exit ${run.status}`);
  if (run.status !== 0 || result.score < floor) {
    failed.push(`${module} ran: ${result.score}%, Stryker exit ${run.status}`);
    continue;
  }
  copyFileSync(reportFile, join(dirname(reportFile), `${module.replaceAll('/', '_')}.json`));
  baseline[module] = { ...result, fingerprint: before, date: new Date().toISOString().slice(0, 10), commit };
  writeFileSync(BASELINE, `${JSON.stringify(baseline, null, 2)}\n`);
}

// Every stored score, run now or not: a baseline edited by hand, or recorded under another floor, fails too.
for (const [module, row] of Object.entries(baseline)) {
  if (!(row.score >= floor)) failed.push(`${module} stored: ${row.score}% in ${BASELINE}`);
}

console.log(
  '\n| Module | Mutants scored | Ignored (equivalent, Lua) | Score | Run on | Commit |\n| --- | ---: | ---: | ---: | --- | --- |',
);
for (const module of modules) {
  const row = baseline[module];
  console.log(
    row
      ? `| ${module} | ${row.mutants} | ${row.ignored} | ${row.score.toFixed(2)}% | ${row.date} | ${row.commit} |`
      : `| ${module} | never run | | | | |`,
  );
}
if (failed.length > 0) {
  console.error(`mutation: below ${floor}% or failed:\n  ${failed.join('\n  ')}`);
  process.exit(1);
}
console.log(`mutation: every stored score is at least ${floor}%`);
