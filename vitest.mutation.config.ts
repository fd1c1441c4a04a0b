import { defineConfig } from 'vitest/config';

/**
 * The tests `npm run mutation` (stryker.config.mjs) runs against each
 * mutant: the unit tests of the pure rule modules. They need no Postgres or
 * Redis, so there is no globalSetup; a test added here must not either.
 */
export default defineConfig({
  test: {
    include: [
      'test/domain/**/*.test.ts',
      'test/ledger/merkle.test.ts',
      'test/ledger/leaf.test.ts',
      'test/ledger/checkpointPayload.test.ts',
      'test/commands/**/*.test.ts',
      'test/store/rateLimiter.test.ts',
      'test/store/idempotencyStore.test.ts',
      'test/store/admission.test.ts',
    ],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
