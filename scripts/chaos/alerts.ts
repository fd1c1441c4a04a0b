/**
 * What the topology's Prometheus (config/prometheus/alerts.yml's rules) made of the faults: its HTTP API
 * (/api/v1/alerts) asked every second during the run. An alert is attributed to the fault window in which
 * it became active (its activeAt), so an alert still firing from one fault is not counted for the next.
 */

export interface Sighting {
  name: string;
  /** Its labels but alertname, as `key=value` pairs: which instance, job or project. */
  labels: string;
  /** When it became active (pending, or firing at once for a rule without `for:`), ms since the epoch. */
  activeAt: number;
  /** Whether it was ever seen firing (else it stayed pending: the fault ended before the rule's `for:`). */
  fired: boolean;
  /** The first and last polls that saw it firing, ms since the epoch. */
  firingSeen?: { first: number; last: number };
}

interface AlertsAnswer {
  data: { alerts: { labels: Record<string, string>; state: 'pending' | 'firing' | 'inactive'; activeAt: string }[] };
}

const POLL_MS = 1000;

export class AlertWatch {
  private readonly sightings = new Map<string, Sighting>();
  private running = true;
  private loop: Promise<void> | null = null;
  /** Polls Prometheus did not answer: an alert missed for want of asking is no finding about the rules. */
  unanswered = 0;
  private readonly url: string;

  constructor(prometheusUrl: string) {
    this.url = `${prometheusUrl}/api/v1/alerts`;
  }

  start(): void {
    this.loop = (async () => {
      while (this.running) {
        await this.poll();
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    })();
  }

  private async poll(): Promise<void> {
    const reply = await fetch(this.url, { signal: AbortSignal.timeout(5000) }).catch(() => null);
    if (!reply?.ok) {
      this.unanswered++;
      return;
    }
    const { data } = (await reply.json()) as AlertsAnswer;
    const now = Date.now();
    for (const alert of data.alerts) {
      if (alert.state === 'inactive') continue;
      const { alertname, ...rest } = alert.labels;
      const labels = Object.entries(rest)
        .filter(([name]) => name !== 'severity')
        .map(([name, value]) => `${name}=${value}`)
        .sort()
        .join(',');
      const key = `${alertname}{${labels}}@${alert.activeAt}`;
      const fired = alert.state === 'firing';
      const sighting = this.sightings.get(key) ?? { name: alertname ?? '?', labels, activeAt: Date.parse(alert.activeAt), fired };
      this.sightings.set(key, sighting);
      sighting.fired ||= fired;
      if (fired) sighting.firingSeen = { first: sighting.firingSeen?.first ?? now, last: now };
    }
  }

  /** Stops polling after one last look. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.poll();
  }

  /** Alerts that became active in [from, to) (ms since the epoch). */
  between(from: number, to: number): Sighting[] {
    return [...this.sightings.values()].filter((s) => s.activeAt >= from && s.activeAt < to).sort((a, b) => a.activeAt - b.activeAt);
  }

  /**
   * Alerts active since before `from` and still seen firing in [from, to): an operator paged by an earlier
   * fault is still paged during this one (AgoraPostgresLeaderChanged fires for ten minutes after a change).
   */
  stillFiring(from: number, to: number): Sighting[] {
    return [...this.sightings.values()].filter(
      (s) => s.activeAt < from && s.firingSeen && s.firingSeen.last >= from && s.firingSeen.first < to,
    );
  }
}

/** One fault's verdict: what should page (its `pages`), what went pending, what fired. */
export interface FaultAlerts {
  fault: string;
  pages: string[];
  pending: string[];
  /** What went pending, with the job it was about (which exporter or process): for the table. */
  pendingByJob: string[];
  fired: string[];
  /** Alerts of its `pages` firing since an earlier fault, and still firing in its window. */
  stillFiring: string[];
  /** An alert it should page that did not even go pending: the rule's expression did not see the fault. */
  unseen: string[];
  /** An alert it should page that went pending but never fired (the fault was shorter than the rule's `for:`). */
  pendingOnly: string[];
}

const names = (sightings: Sighting[]) => [...new Set(sightings.map((s) => s.name))];
const job = (s: Sighting) => /(?:^|,)job=([^,]+)/.exec(s.labels)?.[1];
const namesByJob = (sightings: Sighting[]) => [...new Set(sightings.map((s) => (job(s) ? `${s.name} (${job(s)})` : s.name)))];

export function faultAlerts(fault: string, pages: string[], sightings: Sighting[], earlier: Sighting[]): FaultAlerts {
  const pending = names(sightings);
  const fired = names(sightings.filter((s) => s.fired));
  const stillFiring = names(earlier).filter((name) => pages.includes(name) && !fired.includes(name));
  return {
    fault,
    pages,
    pending,
    pendingByJob: namesByJob(sightings),
    fired,
    stillFiring,
    unseen: pages.filter((name) => !pending.includes(name) && !stillFiring.includes(name)),
    pendingOnly: pages.filter((name) => pending.includes(name) && !fired.includes(name)),
  };
}

export function printAlertTable(quiet: Sighting[], faults: FaultAlerts[], watch: AlertWatch): void {
  const describe = (sightings: Sighting[]) =>
    sightings.map((s) => `${s.name}${s.fired ? '' : ' (pending)'} {${s.labels}}`).join('; ') || 'none';
  console.log(`\nalerts (the topology's Prometheus, /api/v1/alerts every ${POLL_MS / 1000} s; ${watch.unanswered} polls unanswered)`);
  console.log(`quiet stretch before the first fault: ${describe(quiet)}`);
  console.log('| fault | should page | went pending | fired | finding |\n|---|---|---|---|---|');
  for (const f of faults) {
    const finding = [
      ...f.unseen.map((name) => `${name} never even pending`),
      ...f.pendingOnly.map((name) => `${name} pending, not fired (fault shorter than its for:)`),
    ].join('; ');
    console.log(
      `| ${f.fault} | ${f.pages.join(', ') || '-'} | ${f.pendingByJob.join(', ') || '-'} | ` +
        `${[...f.fired, ...f.stillFiring.map((name) => `${name} (still, since an earlier fault)`)].join(', ') || '-'} | ` +
        `${finding || '-'} |`,
    );
  }
}
