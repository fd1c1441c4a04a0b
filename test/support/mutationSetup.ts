import type { TestProject } from 'vitest/node';
import './providedContext.ts';

/**
 * The mutation run's global setup (vitest.mutation.config.ts): Redis only,
 * for the stores whose branches depend on what a real Redis answers. The
 * local one (REDIS_URL, or the contract's default), never a container: the
 * run re-executes these tests for every mutant and must start fast.
 */
export default function setup(project: TestProject): void {
  project.provide('redisUrl', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
}
