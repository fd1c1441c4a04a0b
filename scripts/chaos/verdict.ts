/**
 * How a chaos run ends: which checks it makes, which of them CHAOS_BOUNDS=report only prints, and the closing
 * line, which never says a check holds that was not enforced.
 */
import { type Baseline, MAX_STEADY_GAP_MS, MAX_STEADY_WRITE_MS, unfitBaseline, type WindowFigures } from './bounds.ts';
import type { StoreFindings } from './checks.ts';
import type { LoadCounters } from './load.ts';

/** `enforce`: every check fails the run. `report` (CHAOS_BOUNDS=report): the bound and alert checks are printed only. */
export type BoundsMode = 'enforce' | 'report';

const isCi = (env: Record<string, string | undefined>) => env.CI !== undefined && !['', '0', 'false'].includes(env.CI.toLowerCase());

/**
 * The mode CHAOS_BOUNDS asks for, or an Error saying why it is refused. Report mode is for a machine loaded by
 * other work; CI is the gate the bounds exist for, so it may not turn them off there.
 */
export function boundsMode(env: Record<string, string | undefined>): BoundsMode {
  const asked = env.CHAOS_BOUNDS;
  if (asked === undefined || asked === '') return 'enforce';
  if (asked !== 'report')
    throw new Error(`CHAOS_BOUNDS=${asked} is not a mode: leave it unset to enforce every check, or set it to report`);
  if (isCi(env)) throw new Error('CHAOS_BOUNDS=report is refused under CI: CI enforces every bound and alert check');
  return 'report';
}

export interface Check {
  name: string;
  value: number | string;
  ok: boolean;
  /** A bound or alert check: under CHAOS_BOUNDS=report printed with its verdict but not failing the run. */
  bound?: boolean;
}

/** The checks of what the load saw and the stores hold: each fails the run in every mode. */
export function correctnessChecks(
  c: LoadCounters,
  stores: StoreFindings,
  processes: { failedJobs: number; unhandledErrors: number; unexpectedExits: number },
): Check[] {
  const refusals =
    Object.entries(c.refusals)
      .map(([kind, n]) => `${kind}: ${n}`)
      .join(', ') || 'none';
  return [
    { name: 'requests', value: c.requests, ok: true },
    { name: 'acknowledged writes', value: c.acknowledged, ok: c.acknowledged > 0 },
    { name: `unexpected refusals (definite 4xx; ${refusals})`, value: c.refused, ok: c.refused === 0 },
    { name: '503 answers (retried)', value: c.unavailable, ok: true },
    { name: 'writes given up after 60 s', value: c.gaveUp, ok: c.gaveUp === 0 },
    { name: 'lost', value: stores.lost, ok: stores.lost === 0 },
    {
      name: 'votes not at their last acknowledged value, or posts with a wrong tally',
      value: stores.wrongVotes,
      ok: stores.wrongVotes === 0,
    },
    { name: 'applied twice', value: stores.appliedTwice, ok: stores.appliedTwice === 0 },
    { name: '500s', value: c.serverErrors, ok: c.serverErrors === 0 },
    { name: 'failed jobs (out of attempts)', value: processes.failedJobs, ok: processes.failedJobs === 0 },
    { name: 'ledger gaps', value: stores.ledgerGaps, ok: stores.ledgerGaps === 0 },
    { name: 'outbox left unpublished', value: stores.unpublished, ok: stores.unpublished === 0 },
    { name: 'unhandled Redis error events', value: processes.unhandledErrors, ok: processes.unhandledErrors === 0 },
    { name: 'process exits the suite did not cause', value: processes.unexpectedExits, ok: processes.unexpectedExits === 0 },
  ];
}

/** One row of the fault table: the steady state's window, or a fault's. */
export interface Judged {
  name: string;
  steady: boolean;
  /** Where its window began (ms since the load began). */
  at: number;
  figures: WindowFigures;
  bound: number | undefined;
  ok: boolean;
  /** When the first write sent after it was acknowledged, ms after it; null if none was. */
  recoveredMs: number | null;
}

/** A run's windows, judged against the steady state's baseline; `bounded` when any fault has a bound. */
export interface JudgedRun {
  baseline: Baseline;
  bounded: boolean;
  windows: Judged[];
}

/**
 * The bounds, where a fault has one: the steady state must be fit to judge by (else the run is invalid), and no
 * window may exceed its bound, neither by its longest gap nor by its slowest write (bounds.ts withinBound): gaps are
 * per project, so one write could stall for its whole patience while the project's other writers kept them short.
 */
export function boundChecks({ baseline, bounded, windows }: JudgedRun): Check[] {
  const faults = windows.slice(1);
  const never: Check = {
    name: 'faults never recovered from',
    value: faults.filter((w) => w.recoveredMs === null).length,
    ok: faults.every((w) => w.recoveredMs !== null),
  };
  if (!bounded) return [never];
  const unfit = unfitBaseline(baseline);
  const over = windows.filter((w) => w.bound !== undefined && !w.ok);
  return [
    never,
    {
      name: `steady state fit to judge by (longest gap at most ${MAX_STEADY_GAP_MS} ms / slowest write at most ${MAX_STEADY_WRITE_MS} ms)`,
      value: `${baseline.gapMs} / ${baseline.latencyMs}`,
      ok: unfit.length === 0,
      bound: true,
    },
    {
      name: `windows whose longest gap or slowest write is over their bound (${over.map((w) => w.name).join('; ') || 'none'})`,
      value: over.length,
      ok: over.length === 0,
      bound: true,
    },
  ];
}

/** The check table, the closing line, and whether the run passed. */
export function verdict(checks: readonly Check[], mode: BoundsMode): { lines: string[]; passed: boolean } {
  const reported = (check: Check) => mode === 'report' && check.bound === true;
  const failing = checks.filter((check) => !check.ok && !reported(check));
  const mark = (check: Check) => `${check.ok ? 'yes' : 'NO'}${reported(check) ? ' (reported, not enforced)' : ''}`;
  const table = [
    '| check | value | ok |',
    '|---|---|---|',
    ...checks.map((check) => `| ${check.name} | ${check.value} | ${mark(check)} |`),
  ];
  const unenforced = checks.filter(reported);
  let closing: string;
  if (failing.length > 0) closing = `chaos: FAILED: ${failing.map((check) => check.name).join('; ')}`;
  else if (unenforced.length > 0)
    closing =
      `chaos: the enforced checks hold; ${unenforced.length} bound and alert checks were not enforced ` +
      `(CHAOS_BOUNDS=report), ${unenforced.filter((check) => !check.ok).length} of them failing`;
  else closing = 'chaos: every check holds';
  return { lines: [...table, '', closing], passed: failing.length === 0 };
}
