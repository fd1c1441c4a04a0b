import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Each file runs its own API+worker app on its own Redis prefix; two at a time fit a 2-core machine.
    maxWorkers: 2,
  },
});
