// @ts-check
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import config from '../stryker.config.mjs';

/**
 * `npm run mutation`: StrykerJS one module at a time (`--mutate`), so that
 * `thresholds.break` (85) holds for each module and not only for their sum,
 * and only for the modules that changed since stryker/baseline.json: a
 * module's fingerprint covers its source, its test (test/ mirrors src/),
 * every file either imports (relative imports, followed), and the mutation
 * run's own configuration. `npm run mutation -- --all` runs every module.
 * Each passing run records the module's score, fingerprint, date and commit
 * in the baseline (commit it); the run exits 1 if any module is below 85%.
 * `npm run mutation -- src/ledger/leaf.ts` runs the modules named.
 */
const BASELINE = 'stryker/baseline.json';
const SHARED = [
  'stryker.config.mjs',
  'vitest.mutation.config.ts',
  'tsconfig.mutation.json',
  'stryker/typescriptApi.mjs',
  'stryker/luaScriptIgnorer.mjs',
  'test/support/mutationSetup.ts',
];
const detected = new Set(['Killed', 'Timeout']);
const scored = new Set(['Killed', 'Timeout', 'Survived', 'NoCoverage']);

/** The file and everything it imports through relative paths. */
function closure(start, seen = new Set()) {
  if (seen.has(start) || !existsSync(start)) return seen;
  seen.add(start);
  for (const [, target] of readFileSync(start, 'utf8').matchAll(/(?:from|import)\s+'(\.{1,2}\/[^']+)'/g))
    closure(relative('.', resolve(dirname(start), target)), seen);
  return seen;
}

function fingerprint(module) {
  const files = new Set([...SHARED, ...closure(module), ...closure(module.replace(/^src\//, 'test/').replace(/\.ts$/, '.test.ts'))]);
  const hash = createHash('sha256');
  for (const file of [...files].sort()) hash.update(`${file}\n`).update(existsSync(file) ? readFileSync(file) : '');
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
// Named modules run whatever their fingerprint; --all runs every module; otherwise the changed ones.
const changed =
  named.length > 0 ? named : modules.filter((module) => args.includes('--all') || baseline[module]?.fingerprint !== fingerprint(module));
const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || 'unknown';
const floor = config.thresholds?.break ?? 85;
const failed = [];

if (changed.length === 0) console.log(`mutation: no mutated module changed since ${BASELINE}; nothing to run`);
for (const module of changed) {
  console.log(`mutation: ${module}`);
  const run = spawnSync('npx', ['stryker', 'run', '--mutate', module], { stdio: 'inherit' });
  const reportFile = config.jsonReporter?.fileName ?? 'reports/mutation/mutation.json';
  const report = run.status === 0 || existsSync(reportFile) ? JSON.parse(readFileSync(reportFile, 'utf8')) : { files: {} };
  const result = scoreOf(report, module);
  if (run.status !== 0 || result.score < floor) {
    failed.push(`${module} (${result.score}%)`);
    continue;
  }
  copyFileSync(reportFile, join(dirname(reportFile), `${module.replaceAll('/', '_')}.json`));
  baseline[module] = { ...result, fingerprint: fingerprint(module), date: new Date().toISOString().slice(0, 10), commit };
  writeFileSync(BASELINE, `${JSON.stringify(baseline, null, 2)}\n`);
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
  console.error(`mutation: below ${floor}% or failed: ${failed.join(', ')}`);
  process.exit(1);
}
