import { performance } from 'node:perf_hooks';

/** Polls `check` every 50 ms until it holds, for at most `ms` of the monotonic clock (a faked Date does not stop it). */
export async function until(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}
