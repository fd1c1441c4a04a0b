/**
 * Waits for `work` at most `ms`; past that, tells `onTimeout` and returns
 * (the work goes on unawaited). Shutdown steps use it so that a connection
 * hanging after an outage cannot keep a process from exiting.
 */
export async function settleWithin(work: Promise<unknown>, ms: number, onTimeout: () => void): Promise<'done' | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
    timer.unref();
  });
  const outcome = await Promise.race([
    work.then(
      () => 'done' as const,
      () => 'done' as const,
    ),
    late,
  ]);
  clearTimeout(timer);
  if (outcome === 'late') onTimeout();
  return outcome;
}
