/**
 * Named crash points for the crash-recovery tests. `AGORA_FAILPOINTS` (a
 * comma-separated list of names) arms them; the process then dies with
 * SIGKILL the first time it reaches an armed one, exactly as a power cut
 * there would leave things. With `AGORA_FAILPOINT_SIGNAL=SIGSTOP` it freezes
 * there instead, once (a long GC pause or a paused VM), until someone sends it
 * SIGCONT. Unset (always, outside those tests), each call is one Set lookup
 * and nothing else.
 */
const FAILPOINTS = [
  /** Inside a batch transaction, after its locks and before its writes: Postgres rolls it back. */
  'batch-mid-transaction',
  /** The batch committed; no ETag, retry-key result or reply has gone out, the job is not complete. */
  'batch-committed-before-reply',
  /** Replies published; the job is not yet marked complete, so another worker runs it again. */
  'batch-replied-before-complete',
] as const;

export type Failpoint = (typeof FAILPOINTS)[number];

const armed = new Set(
  (process.env.AGORA_FAILPOINTS ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean),
);
const signal = process.env.AGORA_FAILPOINT_SIGNAL === 'SIGSTOP' ? 'SIGSTOP' : 'SIGKILL';

export function failpoint(name: Failpoint): void {
  if (!armed.has(name)) return;
  armed.delete(name);
  process.stderr.write(`failpoint ${name} reached: ${signal === 'SIGKILL' ? 'crashing' : 'freezing'}\n`);
  process.kill(process.pid, signal);
}
