import { defineConfig } from 'vitest/config';

/**
 * The tests `npm run mutation` (stryker.config.mjs) runs against each
 * mutant: the unit tests of the pure rule modules, and of the stores around
 * Redis. They need no Postgres; the retry-key store's run against the local
 * Redis (test/support/mutationSetup.ts provides its URL) and start a Redis
 * Cluster of their own for its cluster branch.
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
    globalSetup: ['test/support/mutationSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
