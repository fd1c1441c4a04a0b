import { describe, expect, it } from 'vitest';
import type { StoreFindings } from '../../../scripts/chaos/checks.ts';
import { withinBound as keptBound } from '../../../scripts/chaos/bounds.ts';
import type { LoadCounters } from '../../../scripts/chaos/load.ts';
import { boundChecks, boundsMode, type Check, correctnessChecks, type Judged, verdict } from '../../../scripts/chaos/verdict.ts';

const counters = (changes: Partial<LoadCounters> = {}): LoadCounters => ({
  requests: 100,
  acknowledged: 100,
  refused: 0,
  refusals: {},
  gaveUp: 0,
  serverErrors: 0,
  unavailable: 0,
  successes: [],
  ...changes,
});
const clean: StoreFindings = { lost: 0, wrongVotes: 0, appliedTwice: 0, ledgerGaps: 0, unpublished: 0 };
const quiet = { failedJobs: 0, unhandledErrors: 0, unexpectedExits: 0 };
const correct: Check = { name: 'lost', value: 0, ok: true };
const overBound: Check = { name: 'windows over their bound', value: 1, ok: false, bound: true };
const withinBound: Check = { name: 'windows over their bound', value: 0, ok: true, bound: true };

describe('boundsMode', () => {
  it('enforces every check when CHAOS_BOUNDS is unset', () => {
    expect(boundsMode({ CI: 'true' })).toBe('enforce');
  });

  it('grants report mode outside CI', () => {
    expect(boundsMode({ CHAOS_BOUNDS: 'report' })).toBe('report');
  });

  it('refuses report mode under CI=true, saying so', () => {
    expect(() => boundsMode({ CHAOS_BOUNDS: 'report', CI: 'true' })).toThrow('CHAOS_BOUNDS=report is refused under CI');
  });

  it('refuses a CHAOS_BOUNDS that is no mode rather than enforcing less', () => {
    expect(() => boundsMode({ CHAOS_BOUNDS: 'reprot' })).toThrow('CHAOS_BOUNDS=reprot is not a mode');
  });
});

describe('correctnessChecks', () => {
  it('fails the run on an unexpected refusal, naming it', () => {
    const checks = correctnessChecks(counters({ refused: 1, refusals: { 'votes not_found': 1 } }), clean, quiet);
    const { lines, passed } = verdict(checks, 'report');
    expect(passed).toBe(false);
    expect(lines.at(-1)).toBe('chaos: FAILED: unexpected refusals (definite 4xx; votes not_found: 1)');
  });

  it('fails the run on a vote left at another value than its last acknowledged one', () => {
    expect(verdict(correctnessChecks(counters(), { ...clean, wrongVotes: 1 }, quiet), 'enforce').passed).toBe(false);
  });

  it('passes a run in which nothing went wrong', () => {
    expect(verdict(correctnessChecks(counters(), clean, quiet), 'enforce')).toMatchObject({
      passed: true,
      lines: expect.arrayContaining(['chaos: every check holds']),
    });
  });
});

describe('verdict', () => {
  it('fails an enforced run on a bound check', () => {
    expect(verdict([correct, overBound], 'enforce')).toMatchObject({
      passed: false,
      lines: expect.arrayContaining(['chaos: FAILED: windows over their bound']),
    });
  });

  it('passes a report-mode run over a bound without claiming that every check holds', () => {
    const { lines, passed } = verdict([correct, overBound], 'report');
    expect(passed).toBe(true);
    expect(lines).toContain('| windows over their bound | 1 | NO (reported, not enforced) |');
    expect(lines.at(-1)).toBe(
      'chaos: the enforced checks hold; 1 bound and alert checks were not enforced (CHAOS_BOUNDS=report), 1 of them failing',
    );
  });

  it('says a report-mode run did not enforce its bounds even when they held', () => {
    expect(verdict([correct, withinBound], 'report').lines.at(-1)).toBe(
      'chaos: the enforced checks hold; 1 bound and alert checks were not enforced (CHAOS_BOUNDS=report), 0 of them failing',
    );
  });
});

describe('boundChecks', () => {
  const baseline = { gapMs: 400, latencyMs: 300 };
  const window = (name: string, bound: number | undefined, gapMs: number, latencyMs: number): Judged => {
    const figures = { gapMs, gap: null, latencyMs, slowest: null };
    return {
      name,
      steady: false,
      at: 0,
      figures,
      bound,
      ok: bound === undefined || keptBound(figures, bound, baseline),
      recoveredMs: 100,
    };
  };

  it('fails an enforced run on a fault whose gaps held but whose slowest write took longer than its bound allows, naming it', () => {
    const windows = [window('steady state', 0, 400, 300), window('switchover', 3000, 1800, 3000 + 300 + 251)];
    const checks = boundChecks({ baseline, bounded: true, windows });
    const over = checks.find((check) => check.name.startsWith('windows whose longest gap or slowest write'));
    expect(over).toMatchObject({ value: 1, ok: false, bound: true });
    expect(over?.name).toContain('(switchover)');
    expect(verdict(checks, 'enforce').passed).toBe(false);
  });

  it('passes an enforced run whose every window kept its bound by gap and by write', () => {
    const windows = [window('steady state', 0, 400, 300), window('switchover', 3000, 1800, 3000 + 300 + 250)];
    expect(verdict(boundChecks({ baseline, bounded: true, windows }), 'enforce').passed).toBe(true);
  });
});
