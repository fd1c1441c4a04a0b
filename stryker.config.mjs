// @ts-check
import { pathToFileURL } from 'node:url';
// Stryker's own process reads tsconfig.json with the TypeScript 6 API: see the file.
import './stryker/typescriptApi.mjs';

/**
 * Mutation testing of the pure rule modules and the stores around Redis
 * (docs/testing.md): `npm run mutation` (stryker/run.mjs), in CI too. It runs
 * Stryker once per module that changed, so `thresholds.break` fails any
 * module below 85%. Runs one test runner and one checker (2-core machines).
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  mutate: [
    'src/domain/reputation.ts',
    'src/domain/roles.ts',
    'src/domain/slugs.ts',
    'src/domain/review.ts',
    'src/domain/attestations.ts',
    'src/domain/storableText.ts',
    'src/ledger/merkle.ts',
    'src/ledger/leaf.ts',
    'src/ledger/checkpointPayload.ts',
    'src/commands/flags/flagRules.ts',
    'src/commands/votes/voteRules.ts',
    'src/commands/moderation/recordModeration.ts',
    'src/store/rateLimiter.ts',
    'src/store/idempotencyStore.ts',
    'src/store/admission.ts',
  ],
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  coverageAnalysis: 'perTest',
  checkers: ['typescript'],
  // Only the mutated modules and their tests (and what they import): a smaller program to re-check per mutant.
  tsconfigFile: 'tsconfig.mutation.json',
  // TypeScript 7, the compiler of `npx tsc`; stryker/typescriptApi.mjs explains the import hook.
  typescriptChecker: { experimentalNativePreview: true },
  checkerNodeArgs: ['--import', pathToFileURL('stryker/typescriptApi.mjs').href],
  plugins: ['@stryker-mutator/vitest-runner', '@stryker-mutator/typescript-checker', './stryker/luaScriptIgnorer.mjs'],
  ignorers: ['lua-script'],
  concurrency: 1,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  clearTextReporter: { allowColor: false, allowEmojis: false, logTests: false, reportMutants: true, reportScoreTable: true },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['.toolchain', 'sdk/node_modules', 'coverage', 'reports', 'test-results.json'],
};
