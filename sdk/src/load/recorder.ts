import { build, type Histogram } from 'hdr-histogram-js';
import { operations, type Operation } from './plan.ts';

/**
 * Latencies in HDR histograms (microseconds, 3 significant digits). The
 * response time of a request runs from when the schedule said it should
 * start, not from when it was sent: a stalled service delays the requests
 * behind it, and that wait is counted (coordinated omission corrected, as
 * wrk2 does). The service time, from the actual send, is kept beside it.
 */
export type Outcome = 'ok' | 'rateLimited' | 'error' | 'dropped';

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

export interface Second {
  /** Seconds since the start. */
  t: number;
  completed: number;
  ok: number;
  rateLimited: number;
  errors: number;
  dropped: number;
  p50: number;
  p99: number;
  max: number;
}

const histogram = (): Histogram =>
  build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
const ms = (us: number): number => Math.round(us) / 1000;

export function summarize(h: Histogram): LatencySummary {
  return {
    count: h.totalCount,
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    max: ms(h.maxValue),
    mean: ms(h.mean),
  };
}

type Counts = Record<Outcome, number>;
const zero = (): Counts => ({ ok: 0, rateLimited: 0, error: 0, dropped: 0 });

export class Recorder {
  readonly responseTime = histogram();
  readonly serviceTime = histogram();
  readonly byOperation = new Map<Operation, { histogram: Histogram; counts: Counts }>(
    operations.map((op) => [op, { histogram: histogram(), counts: zero() }]),
  );
  readonly timeline: Second[] = [];
  private window = histogram();
  private windowCounts = zero();
  readonly totals = zero();

  record(op: Operation, outcome: Outcome, responseUs: number, serviceUs: number): void {
    this.totals[outcome]++;
    this.windowCounts[outcome]++;
    const per = this.byOperation.get(op)!;
    per.counts[outcome]++;
    if (outcome === 'dropped') return;
    const value = Math.max(1, Math.round(responseUs));
    this.responseTime.recordValue(value);
    this.serviceTime.recordValue(Math.max(1, Math.round(serviceUs)));
    per.histogram.recordValue(value);
    this.window.recordValue(value);
  }

  /** Closes the current one-second window as second `t`. */
  closeSecond(t: number): Second {
    const c = this.windowCounts;
    const second = {
      t,
      completed: c.ok + c.rateLimited + c.error,
      ok: c.ok,
      rateLimited: c.rateLimited,
      errors: c.error,
      dropped: c.dropped,
      p50: ms(this.window.getValueAtPercentile(50)),
      p99: ms(this.window.getValueAtPercentile(99)),
      max: ms(this.window.maxValue),
    };
    this.timeline.push(second);
    this.window.reset();
    this.windowCounts = zero();
    return second;
  }
}
