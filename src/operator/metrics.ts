import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ProjectMetrics } from './projectMetrics.ts';

/** How long a scrape waits for one read of shared state. */
const SOURCE_TIMEOUT_MS = 2000;

export type QueueCounts = Record<string, Record<string, number>>;
export interface ReadCacheSize {
  bytes: number;
  entries: number;
}
export interface OutboxLag {
  pending: number;
  oldestAgeSeconds: number;
}

/**
 * Every Prometheus metric of one process (a registry per app, so several
 * apps in one test process do not collide). Gauges that describe shared
 * state (queue depth, publisher lag) are read when scraped, from sources the
 * roles attach.
 */
export class Metrics {
  readonly registry = new Registry();
  private queueSource: (() => Promise<QueueCounts>) | null = null;
  private lagSource: (() => Promise<OutboxLag>) | null = null;
  private readCacheSource: (() => ReadCacheSize) | null = null;

  readonly httpRequests = new Counter({
    name: 'agora_http_requests_total',
    help: 'HTTP requests answered, by route, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'agora_http_request_duration_seconds',
    help: 'Time from receiving a request to answering it',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly commands = new Counter({
    name: 'agora_commands_total',
    help: 'Commands answered by workers, by type and outcome (applied, refused, replayed)',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly batchSize = new Histogram({
    name: 'agora_batch_size',
    help: 'Commands per applied batch',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128],
    registers: [this.registry],
  });
  readonly batchDuration = new Histogram({
    name: 'agora_batch_apply_duration_seconds',
    help: 'Time to apply one batch (transaction and delivery of results)',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly streamsOpen = new Gauge({
    name: 'agora_event_streams_open',
    help: 'Event streams (/api/forum/events/stream) open on this process',
    registers: [this.registry],
  });
  readonly streamsLimit = new Gauge({
    name: 'agora_event_streams_limit',
    help: 'Event streams this process holds at most (STREAM_MAX_PER_PROCESS)',
    registers: [this.registry],
  });
  readonly streamsClosed = new Counter({
    name: 'agora_event_streams_closed_total',
    help: 'Event streams closed, by reason: client (it left), slow (it fell behind its buffer), shutdown (drain)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly idempotency = new Counter({
    name: 'agora_idempotency_total',
    help: 'Retry-key outcomes other than a first use: replayed, reused (409) and in_progress (409)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly rateLimitRefusals = new Counter({
    name: 'agora_rate_limit_refusals_total',
    help: 'Requests refused by a token bucket, by rate class',
    labelNames: ['class'] as const,
    registers: [this.registry],
  });

  /** Per-project backlog and apply latency, with bounded cardinality. */
  readonly projects = new ProjectMetrics(this.registry);

  readonly readCache = new Counter({
    name: 'agora_read_cache_total',
    help:
      'Full reads by how this API process answered them: hit (a body rendered before), shared (a render another read had ' +
      'under way), miss (rendered for it)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    const metrics = this;
    new Gauge({
      name: 'agora_read_cache_bytes',
      help: 'Bytes of rendered read bodies this API process keeps (bounded by READ_CACHE_BYTES)',
      registers: [this.registry],
      collect() {
        this.set(metrics.readCacheSource?.().bytes ?? 0);
      },
    });
    new Gauge({
      name: 'agora_read_cache_entries',
      help: 'Rendered read bodies this API process keeps',
      registers: [this.registry],
      collect() {
        this.set(metrics.readCacheSource?.().entries ?? 0);
      },
    });
  }

  private readonly queueJobs = new Gauge({
    name: 'agora_queue_jobs',
    help: 'Jobs per partition queue and state',
    labelNames: ['queue', 'state'] as const,
    registers: [this.registry],
  });
  private readonly sourceFailures = new Counter({
    name: 'agora_metrics_source_failures_total',
    help: 'Scrape-time reads of shared state (queues, project backlog, outbox) that failed or took too long; their series are left out of that scrape',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  private readonly outboxPending = new Gauge({
    name: 'agora_ledger_outbox_pending',
    help: 'Outbox events committed but not yet published to the ledger',
    registers: [this.registry],
  });
  private readonly outboxOldestAge = new Gauge({
    name: 'agora_ledger_outbox_oldest_age_seconds',
    help: 'Age of the oldest unpublished outbox event (0 when none)',
    registers: [this.registry],
  });

  watchQueues(source: () => Promise<QueueCounts>): void {
    this.queueSource ??= source;
  }

  watchReadCache(source: () => ReadCacheSize): void {
    this.readCacheSource ??= source;
  }

  watchLedgerLag(source: () => Promise<OutboxLag>): void {
    this.lagSource ??= source;
  }

  /**
   * Shared state is read once per scrape, in parallel and each read bounded:
   * during a Redis or Postgres outage the scrape still answers, with the
   * process's own series and without those it could not read.
   */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const [queues, backlog, lag] = await Promise.all([
      this.read('queues', this.queueSource),
      this.read('project_backlog', this.projects.backlogSource),
      this.read('ledger_outbox', this.lagSource),
    ]);
    this.queueJobs.reset();
    for (const [queue, counts] of Object.entries(queues ?? {})) {
      for (const [state, count] of Object.entries(counts)) this.queueJobs.set({ queue, state }, count);
    }
    this.projects.refresh(backlog);
    if (lag) {
      this.outboxPending.set(lag.pending);
      this.outboxOldestAge.set(lag.oldestAgeSeconds);
    } else if (this.lagSource) {
      this.outboxPending.reset();
      this.outboxOldestAge.reset();
    }
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** A source's value, or null when it is not attached, fails, or takes longer than SOURCE_TIMEOUT_MS (a connection waiting for Redis to return). */
  private async read<T>(source: string, read: (() => Promise<T>) | null): Promise<T | null> {
    if (!read) return null;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), SOURCE_TIMEOUT_MS)));
    try {
      const value = await Promise.race([read(), late]);
      if (value === null) this.sourceFailures.inc({ source });
      return value;
    } catch {
      this.sourceFailures.inc({ source });
      return null;
    } finally {
      clearTimeout(timer);
    }
  }
}
