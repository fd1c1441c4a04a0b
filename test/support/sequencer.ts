import { readFileSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** A file that starts processes of its own: services, the CLI, HAProxy, engines, a Postgres replica, Chromium. */
const STARTS_PROCESSES =
  /\b(startServiceProcess|spawn|execFile|Balancer\.start|startTopology|startOwnRedis|startStreamingPair|privateClone|launch)\(/;

/**
 * Files that start processes first. Vitest orders by the durations of the last run, or by file size where it has
 * none, as on a fresh clone: there, the longest files (30-90 s, all of them starting processes) began halfway
 * through a CI run and ended it alone, three workers running two files or fewer for 40% of its 402 s.
 */
export class ProcessesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const starts = new Map(sorted.map((file) => [file, STARTS_PROCESSES.test(readFileSync(file.moduleId, 'utf8'))]));
    return [...sorted.filter((file) => starts.get(file)), ...sorted.filter((file) => !starts.get(file))];
  }
}
