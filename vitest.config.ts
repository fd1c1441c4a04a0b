import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { ProcessesFirst } from './test/support/sequencer.ts';

// The suite starts hundreds of Node processes (services, the CLI, the supervisor's roles) besides its own workers,
// each compiling the same modules: V8's code cache, inherited by every one of them, cut the service's import from
// 1.6 to 1.1 s of CPU and the CLI's start from 0.87 to 0.5 s (docs/testing.md). Node checks each file's hash.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'agora-test-compile-cache');

/** Tests that install process-wide hooks (OpenTelemetry's instrumentation patches modules as they load) need a process of their own. */
const ownProcess = ['test/tracing/**/*.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/support/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Each file runs its own API+worker app on its own Redis prefix. Three at a time on a 2-core machine: much of a
    // file's time is waiting (service processes starting, drain graces, timeouts that are the scenario): the suite's
    // own processes use about 460 s of CPU, and two at a time took 437 s of wall in CI, half the machine (docs/testing.md).
    maxWorkers: 3,
    sequence: { sequencer: ProcessesFirst },
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
