import { Gauge, Histogram, type Registry } from 'prom-client';
import { projectOfKey } from '../pipeline/batchName.ts';
import type { ProjectBacklog } from './projectBacklog.ts';

/** The label of everything not named: the projects past the busiest N and the commands outside projects. Not a valid slug. */
const OTHER_PROJECTS = '(other)';
/** Projects counted between two scrapes for the busiest-N choice; past this many, new ones are not counted (no scrape, no growth). */
const MAX_COUNTED = 10_000;

/**
 * Per-project series with bounded cardinality: the N busiest projects by
 * name, the rest summed as project="(other)". The backlog gauges are read
 * from the queues at scrape time, so they rank projects by backlog (a stuck
 * project is always named). The latency histogram is observed as answers
 * arrive, so it ranks by traffic: the N projects this process dispatched
 * most commands for since the previous scrape keep their series; a project
 * that drops out loses its series (Prometheus sees a counter reset when it
 * comes back).
 */
export class ProjectMetrics {
  private topN = 20;
  /** Where the backlog comes from; Metrics reads it at scrape time. */
  backlogSource: (() => Promise<ProjectBacklog[]>) | null = null;
  private readonly labelled = new Set<string>();
  private dispatched = new Map<string, number>();
  private readonly waiting: Gauge<'project'>;
  private readonly oldestAge: Gauge<'project'>;
  private readonly failed: Gauge<'project'>;
  private readonly latency: Histogram<'project'>;

  constructor(registry: Registry) {
    const project = ['project'] as const;
    this.waiting = new Gauge({
      name: 'agora_project_commands_waiting',
      help: 'Commands enqueued and not yet applied (waiting, delayed for a retry, or in the batch being applied), for the busiest projects',
      labelNames: project,
      registers: [registry],
    });
    this.oldestAge = new Gauge({
      name: 'agora_project_oldest_command_age_seconds',
      help: 'Age of the oldest command not yet applied, per project (0 when none waits); for (other), the oldest of the rest',
      labelNames: project,
      registers: [registry],
    });
    this.failed = new Gauge({
      name: 'agora_project_failed_commands',
      help: 'Commands in jobs that failed on every attempt and are still kept (7 days), per project',
      labelNames: project,
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'agora_project_apply_latency_seconds',
      help: 'From an API handing a command to its partition queue to hearing its result (sent after commit), per project',
      labelNames: project,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  }

  /** Where the backlog comes from (an API's partition queues), and how many projects get series of their own. */
  watch(source: () => Promise<ProjectBacklog[]>, topN: number): void {
    this.backlogSource ??= source;
    this.topN = topN;
  }

  /** One command's answer arrived `seconds` after it was handed to the queue. */
  observeAnswer(partitionKey: string, seconds: number): void {
    const project = projectOfKey(partitionKey);
    if (project === null) {
      this.latency.observe({ project: OTHER_PROJECTS }, seconds);
      return;
    }
    if (this.dispatched.has(project) || this.dispatched.size < MAX_COUNTED)
      this.dispatched.set(project, (this.dispatched.get(project) ?? 0) + 1);
    if (!this.labelled.has(project) && this.labelled.size < this.topN) this.labelled.add(project);
    this.latency.observe({ project: this.labelled.has(project) ? project : OTHER_PROJECTS }, seconds);
  }

  /** Before each scrape: the backlog gauges from what the queues hold (none when they could not be read), and the busiest-N choice of the latency series. */
  refresh(backlog: ProjectBacklog[] | null, now = Date.now()): void {
    this.relabelLatency();
    for (const gauge of [this.waiting, this.oldestAge, this.failed]) gauge.reset();
    if (!backlog) return;
    const named = backlog.filter((entry) => entry.project !== null).slice(0, this.topN);
    const rest = backlog.filter((entry) => !named.includes(entry));
    const ageOf = (entries: ProjectBacklog[]) =>
      entries.reduce((max, e) => Math.max(max, e.oldestEnqueuedAt === null ? 0 : (now - e.oldestEnqueuedAt) / 1000), 0);
    for (const entry of named) this.set(entry.project ?? OTHER_PROJECTS, entry.waiting, ageOf([entry]), entry.failed);
    // Always present, so a query over the family has a series even when no project waits.
    this.set(
      OTHER_PROJECTS,
      rest.reduce((sum, e) => sum + e.waiting, 0),
      ageOf(rest),
      rest.reduce((sum, e) => sum + e.failed, 0),
    );
  }

  private set(project: string, waiting: number, oldestAgeSeconds: number, failed: number): void {
    this.waiting.set({ project }, waiting);
    this.oldestAge.set({ project }, oldestAgeSeconds);
    this.failed.set({ project }, failed);
  }

  private relabelLatency(): void {
    if (this.dispatched.size === 0) return;
    const busiest = new Set(
      [...this.dispatched]
        .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
        .slice(0, this.topN)
        .map(([project]) => project),
    );
    for (const project of this.labelled) if (!busiest.has(project)) this.latency.remove({ project });
    this.labelled.clear();
    for (const project of busiest) this.labelled.add(project);
    this.dispatched = new Map();
  }
}
