import { configDefaults, defineConfig } from 'vitest/config';

/** Tests that install process-wide hooks (OpenTelemetry's instrumentation patches modules as they load) need a process of their own. */
const ownProcess = ['test/tracing/**/*.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/support/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Each file runs its own API+worker app on its own Redis prefix; two at a time fit a 2-core machine.
    maxWorkers: 2,
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results.json' },
    projects: [
      {
        // A worker process runs file after file with its modules loaded once (hapi, MikroORM, BullMQ...) instead of a
        // new process per file: every file starts its own app, ORM and Redis connections, and none mutates module state.
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...ownProcess], isolate: false },
      },
      { test: { name: 'isolated', include: ownProcess, isolate: true } },
    ],
  },
});
