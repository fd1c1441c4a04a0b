import { describe, expect, it } from 'vitest';
import {
  type Acknowledgement,
  type Baseline,
  figuresByWindow,
  JITTER_MS,
  longestGap,
  MAX_STEADY_GAP_MS,
  MAX_STEADY_WRITE_MS,
  steadyBaseline,
  unfitBaseline,
  WARM_UP_MS,
  windowOf,
  withinBound,
} from '../../../scripts/chaos/bounds.ts';

/** Acknowledgements of one project at the given times, each sent `latency` ms before. */
const acks = (projectSlug: string, times: number[], latency = 50): Acknowledgement[] =>
  times.map((doneAt) => ({ projectSlug, sentAt: doneAt - latency, doneAt }));

/** Every `step` ms from `from` to `to`, both included. */
const every = (step: number, from: number, to: number) =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

const baseline: Baseline = { gapMs: 500, latencyMs: 300 };
/** The steady state from the warm-up, then faults at 10 s and 20 s, the load ending at 30 s. */
const starts = [WARM_UP_MS, 10_000, 20_000];

describe('longestGap', () => {
  it('counts the whole window for a project with no acknowledgement in it', () => {
    expect(longestGap(acks('a', [500, 5000]), ['a', 'b'], 1000, 4000)).toEqual({ ms: 3000, startedAt: 1000 });
  });

  it('cuts gaps at both ends of the window', () => {
    expect(longestGap(acks('a', [0, 2000, 9000]), ['a'], 1000, 6000)).toEqual({ ms: 4000, startedAt: 2000 });
  });

  it('finds the longest gap of any project and where it began', () => {
    const all = [...acks('a', [1100, 1500, 1900]), ...acks('b', [1200, 1300, 1950])];
    expect(longestGap(all, ['a', 'b'], 1000, 2000)).toEqual({ ms: 650, startedAt: 1300 });
  });
});

describe('windowOf', () => {
  it('puts a time in the last window that began at or before it, and one before every window in none', () => {
    expect([500, 1000, 9999, 10_000, 99_000].map((t) => windowOf(t, starts))).toEqual([-1, 0, 0, 1, 2]);
  });
});

describe('steadyBaseline', () => {
  it('takes the longest gap from the warm-up to the first fault and the slowest write sent and acknowledged in between', () => {
    const all = [
      ...acks('a', every(200, 1000, 12_000)),
      { projectSlug: 'a', sentAt: 500, doneAt: 2500 },
      { projectSlug: 'a', sentAt: 4000, doneAt: 4700 },
      { projectSlug: 'a', sentAt: 9800, doneAt: 11_000 },
      ...acks('b', [1000, 1600, 10_500]),
    ];
    expect(steadyBaseline(all, ['a', 'b'], 10_000)).toEqual({ gapMs: 8400, latencyMs: 700 });
  });
});

describe('unfitBaseline', () => {
  it('finds a steady gap of 2.4 s unfit to judge faults by, saying why', () => {
    expect(unfitBaseline({ gapMs: 2400, latencyMs: 300 })).toEqual(['its longest gap was 2400 ms (at most 1000)']);
  });

  it('finds a steady state whose slowest write took over a second unfit', () => {
    expect(unfitBaseline({ gapMs: 600, latencyMs: 1001 })).toEqual(['its slowest write took 1001 ms (at most 1000)']);
  });

  it('finds a steady state of a second at most fit', () => {
    expect(unfitBaseline({ gapMs: MAX_STEADY_GAP_MS, latencyMs: MAX_STEADY_WRITE_MS })).toEqual([]);
  });
});

describe('withinBound', () => {
  const figures = (gapMs: number, latencyMs: number) => ({ gapMs, gap: null, latencyMs, slowest: null });

  it('allows the steady gap plus the bound plus a constant 250 ms of jitter, and not a millisecond more', () => {
    expect(JITTER_MS).toBe(250);
    expect(withinBound(figures(500 + 2000 + 250, 0), 2000, baseline)).toBe(true);
    expect(withinBound(figures(500 + 2000 + 251, 0), 2000, baseline)).toBe(false);
  });

  it('fails a 3.5 s leader change under a bound of 0 on the slowest steady state a run may have', () => {
    expect(withinBound(figures(3500, 0), 0, { gapMs: MAX_STEADY_GAP_MS, latencyMs: 300 })).toBe(false);
  });

  it('holds the slowest write to the steady state slowest plus the bound plus the jitter', () => {
    expect(withinBound(figures(0, 300 + 5000 + 250), 5000, baseline)).toBe(true);
    expect(withinBound(figures(0, 300 + 5000 + 251), 5000, baseline)).toBe(false);
  });

  it('fails a window whose gaps held when one write stalled past its bound', () => {
    expect(withinBound(figures(500, 300 + 2000 + 251), 2000, baseline)).toBe(false);
  });
});

describe('figuresByWindow', () => {
  it('counts a write stalled for 50 s against its fault although its project never went 300 ms without an acknowledgement', () => {
    const all = [...acks('a', every(250, 1000, 30_000)), { projectSlug: 'a', sentAt: 10_100, doneAt: 60_100 }];
    const [, fault] = figuresByWindow(all, ['a'], starts, 30_000, baseline);
    expect(fault).toMatchObject({ gapMs: 250, latencyMs: 50_000, slowest: { sentAt: 10_100 } });
    expect(withinBound(fault!, 5000, baseline)).toBe(false);
  });

  it("counts a stall that crosses into the next fault's window whole against the fault in whose window it began", () => {
    const all = acks('a', [...every(250, 1000, 18_000), ...every(250, 24_000, 30_000)]);
    const [, first, second] = figuresByWindow(all, ['a'], starts, 30_000, baseline);
    expect(first).toMatchObject({ gapMs: 6000, gap: { startedAt: 18_000, endedAt: 24_000 } });
    expect(second!.gapMs).toBe(250);
  });

  it('charges a stall to the fault that struck just after the last acknowledgement before it', () => {
    const all = acks('a', [...every(250, 1000, 19_750), ...every(250, 25_000, 30_000)]);
    const [, first, second] = figuresByWindow(all, ['a'], starts, 30_000, baseline);
    expect(first!.gapMs).toBe(250);
    expect(second).toMatchObject({ gapMs: 5250, gap: { startedAt: 19_750 } });
  });

  it('charges a write in flight when the next fault struck to that fault', () => {
    const all = [...acks('a', every(250, 1000, 30_000)), { projectSlug: 'a', sentAt: 19_900, doneAt: 26_000 }];
    const [, first, second] = figuresByWindow(all, ['a'], starts, 30_000, baseline);
    expect(first!.latencyMs).toBe(50);
    expect(second).toMatchObject({ latencyMs: 6100, slowest: { sentAt: 19_900 } });
  });

  it('counts a write that stalled before the next fault against the window in which it was sent', () => {
    const all = [...acks('a', every(250, 1000, 30_000)), { projectSlug: 'a', sentAt: 18_000, doneAt: 26_000 }];
    const [, first, second] = figuresByWindow(all, ['a'], starts, 30_000, baseline);
    expect(first!.latencyMs).toBe(8000);
    expect(second!.latencyMs).toBe(50);
  });

  it("runs a stall across the load's end to the acknowledgement that closed it, and one nothing closed to the end", () => {
    const all = [...acks('a', [...every(250, 1000, 27_000), 33_000]), ...acks('b', every(250, 1000, 28_000))];
    const [, , last] = figuresByWindow(all, ['a', 'b'], starts, 30_000, baseline);
    expect(last).toMatchObject({ gapMs: 6000, gap: { projectSlug: 'a', startedAt: 27_000, endedAt: 33_000 } });
    expect(figuresByWindow(acks('b', every(250, 1000, 28_000)), ['b'], starts, 30_000, baseline)[2]!.gapMs).toBe(2000);
  });

  it('judges nothing sent in the warm-up', () => {
    const all = [...acks('a', every(250, 1000, 30_000)), { projectSlug: 'a', sentAt: 900, doneAt: 9000 }];
    expect(figuresByWindow(all, ['a'], starts, 30_000, baseline)[0]!.latencyMs).toBe(50);
  });
});
