/**
 * The arithmetic of the chaos suite's bounds (docs/faults.md, "How a fault is judged"): the run's
 * acknowledged writes in, the steady state's baseline and each fault window's figures out. Pure, so that
 * test/scripts/chaos/bounds.test.ts pins every rule down without a topology.
 */

/** One acknowledged write: when it was first sent and when acknowledged (ms since the load began), and its project. */
export interface Acknowledgement {
  sentAt: number;
  doneAt: number;
  projectSlug: string;
  /** What it asked for (the endpoint's path), for the tables. */
  path?: string;
  /** Each attempt's answer and when it came, in ms after the write was first sent (`503 command_pending +10012`). */
  attempts?: string[];
}

/** The load's first second warms connections; nothing sent or stalled in it is judged. */
export const WARM_UP_MS = 1000;

/**
 * The steady state's longest gap is one sample of a jitter that a fault's window samples again; with no fault
 * at all two such samples differed by up to about 200 ms on a steady gap of 600 (docs/scaling.md). A constant,
 * not a share of the steady gap: a share grows with the very slowness it should not excuse.
 */
export const JITTER_MS = 250;

/**
 * A steady state slower than this is no baseline: every bound is added to it, so a steady gap of 2.4 s let a
 * 3.5 s Postgres leader change pass the etcd fault's bound of 0. Such a run is invalid rather than judged.
 */
export const MAX_STEADY_GAP_MS = 1000;

/**
 * The same for the slowest steady write, which each write's own bound is added to. Set to the gap's second
 * without a quiet machine's figure (the only run since, at load average 19, was invalid on both): if quiet runs
 * show steady writes above it, it is this limit, not the bound, that wants measuring again.
 */
export const MAX_STEADY_WRITE_MS = 1000;

/**
 * The longest time any one project went without an acknowledged write between `from` and `to`, cut at both
 * ends. A project with no acknowledgement in the window counts the whole window.
 */
export function longestGap(acks: readonly Acknowledgement[], projects: readonly string[], from: number, to: number) {
  const longest = { ms: 0, startedAt: from };
  for (const project of projects) {
    const times = acks.filter((a) => a.projectSlug === project && a.doneAt > from && a.doneAt <= to).map((a) => a.doneAt);
    const marks = [from, ...times.sort((a, b) => a - b), to];
    for (let i = 1; i < marks.length; i++) {
      const ms = marks[i]! - marks[i - 1]!;
      if (ms > longest.ms) Object.assign(longest, { ms, startedAt: marks[i - 1]! });
    }
  }
  return longest;
}

/** A stretch in which one project had no acknowledged write. */
interface Gap {
  projectSlug: string;
  startedAt: number;
  endedAt: number;
}

/**
 * Every gap of every project that began between `from` and `end`, whole: one that an acknowledgement after `end`
 * closes runs to it (writes sent before the load ended are still answered), one nothing closes runs to `end`.
 */
function gapsBetween(acks: readonly Acknowledgement[], projects: readonly string[], from: number, end: number): Gap[] {
  const gaps: Gap[] = [];
  for (const projectSlug of projects) {
    const times = acks
      .filter((a) => a.projectSlug === projectSlug && a.doneAt > from)
      .map((a) => a.doneAt)
      .sort((a, b) => a - b);
    let previous = from;
    for (const time of times) {
      if (previous >= end) break;
      gaps.push({ projectSlug, startedAt: previous, endedAt: time });
      previous = time;
    }
    if (previous < end) gaps.push({ projectSlug, startedAt: previous, endedAt: end });
  }
  return gaps;
}

/** The window holding `t`, windows beginning at `starts` (ascending) and the last never ending; -1 before the first. */
export function windowOf(t: number, starts: readonly number[]): number {
  let index = -1;
  for (let i = 0; i < starts.length && starts[i]! <= t; i++) index = i;
  return index;
}

/** What the steady state before the first fault measured: every bound is counted beyond it. */
export interface Baseline {
  /** The longest any project went without an acknowledged write. */
  gapMs: number;
  /** The longest one write took, of those sent and acknowledged in it. */
  latencyMs: number;
}

export function steadyBaseline(acks: readonly Acknowledgement[], projects: readonly string[], firstFault: number): Baseline {
  const latencyMs = acks
    .filter((a) => a.sentAt >= WARM_UP_MS && a.doneAt < firstFault)
    .reduce((longest, a) => Math.max(longest, a.doneAt - a.sentAt), 0);
  return { gapMs: longestGap(acks, projects, WARM_UP_MS, firstFault).ms, latencyMs };
}

/** Why the baseline is too slow to judge faults by; empty when it is fit. */
export function unfitBaseline(baseline: Baseline): string[] {
  return [
    ...(baseline.gapMs > MAX_STEADY_GAP_MS ? [`its longest gap was ${baseline.gapMs} ms (at most ${MAX_STEADY_GAP_MS})`] : []),
    ...(baseline.latencyMs > MAX_STEADY_WRITE_MS
      ? [`its slowest write took ${baseline.latencyMs} ms (at most ${MAX_STEADY_WRITE_MS})`]
      : []),
  ];
}

/**
 * Where a stretch (a gap, or one write's wait) began to stall: once it outlasted what the steady state allows
 * (its baseline and the jitter); one that never did, at its start. Counted from its start, a stall would be
 * charged to the previous fault whenever the project's last acknowledgement, or the write's sending, came just
 * before the next fault struck (every write in flight at the leader's loss, sent in the switchover's window).
 */
function stallBegan(start: number, ms: number, allowanceMs: number): number {
  return ms > allowanceMs ? start + allowanceMs : start;
}

/** One window's figures: its longest gap and its slowest write, each with where it lay. */
export interface WindowFigures {
  gapMs: number;
  gap: Gap | null;
  latencyMs: number;
  slowest: Acknowledgement | null;
}

/**
 * Each window's longest gap and slowest write (windows beginning at `starts`), every gap from WARM_UP_MS on
 * and every write sent from then counted whole against the window in which it began to stall (stallBegan), so
 * that a stall across a window's end is neither cut in two nor lost.
 */
export function figuresByWindow(
  acks: readonly Acknowledgement[],
  projects: readonly string[],
  starts: readonly number[],
  end: number,
  baseline: Baseline,
): WindowFigures[] {
  const figures: WindowFigures[] = starts.map(() => ({ gapMs: 0, gap: null, latencyMs: 0, slowest: null }));
  for (const gap of gapsBetween(acks, projects, WARM_UP_MS, end)) {
    const ms = gap.endedAt - gap.startedAt;
    const window = figures[windowOf(stallBegan(gap.startedAt, ms, baseline.gapMs + JITTER_MS), starts)];
    if (window && ms > window.gapMs) Object.assign(window, { gapMs: ms, gap });
  }
  for (const ack of acks) {
    if (ack.sentAt < WARM_UP_MS) continue;
    const ms = ack.doneAt - ack.sentAt;
    const window = figures[windowOf(stallBegan(ack.sentAt, ms, baseline.latencyMs + JITTER_MS), starts)];
    if (window && ms > window.latencyMs) Object.assign(window, { latencyMs: ms, slowest: ack });
  }
  return figures;
}

/** Whether a window kept its bound: neither its longest gap nor its slowest write exceeded the steady state's by more than the bound and the jitter. */
export function withinBound(figures: WindowFigures, boundMs: number, baseline: Baseline): boolean {
  return figures.gapMs <= boundMs + baseline.gapMs + JITTER_MS && figures.latencyMs <= boundMs + baseline.latencyMs + JITTER_MS;
}
