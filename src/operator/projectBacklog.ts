import type { JobType, Queue } from 'bullmq';
import { readJobData, readJobFields } from '../pipeline/bullmqInternals.ts';
import { batchComposition, batchName, type BatchComposition } from '../pipeline/batchName.ts';

/** Where a job is: not yet applied (waiting, delayed for a retry, active), or done (failed for good, completed). */
type JobState = 'waiting' | 'delayed' | 'active' | 'failed' | 'completed';

/** One queue job as the operators' views need it: its projects, its times, its failure. */
export interface JobSummary {
  queue: string;
  id: string;
  state: JobState;
  composition: BatchComposition;
  /** Epoch milliseconds: when the API enqueued it, when a worker took it (last attempt), when it finished. */
  enqueuedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  attempts: number;
  failedReason: string | null;
  /** The worker that took it, when workers carry a name (BullMQ's processedBy). */
  worker: string | null;
}

/** How many jobs of each kind one read looks at per queue: the oldest pending ones, the newest done ones. */
export interface ReadLimits {
  pending: number;
  failed: number;
  completed: number;
}

function rangesOf(limits: ReadLimits): [JobState, JobType[], number, boolean][] {
  return [
    ['active', ['active'], limits.pending, true],
    ['waiting', ['waiting', 'prioritized'], limits.pending, true],
    ['delayed', ['delayed'], limits.pending, true],
    ['failed', ['failed'], limits.failed, false],
    ['completed', ['completed'], limits.completed, false],
  ];
}

/** The composition of a job whose name does not carry it (enqueued by an API from before batchName): from its commands. */
function compositionOfData(data: string | null): BatchComposition {
  const parsed = JSON.parse(data ?? '{}') as { commands?: { partitionKey: string }[] };
  return batchComposition(batchName((parsed.commands ?? []).map((c) => c.partitionKey))) ?? { projects: new Map(), outside: 0 };
}

/**
 * Summaries of one queue's jobs in two Redis round trips (three when a job
 * from an older API needs its data read): the ids, then their fields without
 * their data (src/pipeline/bullmqInternals.ts says why not Queue.getJobs).
 */
export async function readJobSummaries(queue: Queue, limits: ReadLimits): Promise<JobSummary[]> {
  const wanted = rangesOf(limits).filter(([, , limit]) => limit > 0);
  const ranges = await Promise.all(wanted.map(([, types, limit, oldestFirst]) => queue.getRanges(types, 0, limit - 1, oldestFirst)));
  const listed = wanted.flatMap(([state], i) => (ranges[i] ?? []).map((id) => ({ id, state })));
  const fields = await readJobFields(
    queue,
    listed.map(({ id }) => id),
  );
  const summaries: JobSummary[] = [];
  const unnamed: JobSummary[] = [];
  listed.forEach(({ id, state }, i) => {
    const job = fields[i];
    // Removed between the range and the read (completed jobs are trimmed): nothing to show.
    if (!job) return;
    const composition = batchComposition(job.name);
    const summary: JobSummary = {
      queue: queue.name,
      id,
      state,
      composition: composition ?? { projects: new Map(), outside: 0 },
      enqueuedAt: job.timestamp,
      startedAt: job.processedOn,
      finishedAt: job.finishedOn,
      attempts: job.attemptsMade,
      failedReason: job.failedReason,
      worker: job.processedBy,
    };
    if (!composition) unnamed.push(summary);
    summaries.push(summary);
  });
  const data = await readJobData(
    queue,
    unnamed.map(({ id }) => id),
  );
  unnamed.forEach((summary, i) => {
    summary.composition = compositionOfData(data[i] ?? null);
  });
  return summaries;
}

/** What one project (or, with project null, every command outside projects) has in the queues. */
export interface ProjectBacklog {
  project: string | null;
  /** Commands enqueued and not yet applied: waiting, delayed for a retry, or in the batch being applied. */
  waiting: number;
  /** Enqueue time of the oldest of them (epoch ms), null when none wait. */
  oldestEnqueuedAt: number | null;
  /** Commands in jobs that failed on every attempt (BullMQ keeps them 7 days). */
  failed: number;
  /** Commands in the newest completed jobs read (a sign of recent activity, not a total). */
  recentlyApplied: number;
}

const PENDING: ReadonlySet<JobState> = new Set(['waiting', 'delayed', 'active']);

/** Per-project totals over job summaries, busiest first (most waiting, then oldest, then most failed). */
export function backlogByProject(jobs: readonly JobSummary[]): ProjectBacklog[] {
  const byProject = new Map<string | null, ProjectBacklog>();
  const add = (project: string | null, count: number, job: JobSummary) => {
    let entry = byProject.get(project);
    if (!entry) byProject.set(project, (entry = { project, waiting: 0, oldestEnqueuedAt: null, failed: 0, recentlyApplied: 0 }));
    if (PENDING.has(job.state)) {
      entry.waiting += count;
      entry.oldestEnqueuedAt = Math.min(entry.oldestEnqueuedAt ?? job.enqueuedAt, job.enqueuedAt);
    } else if (job.state === 'failed') entry.failed += count;
    else entry.recentlyApplied += count;
  };
  for (const job of jobs) {
    for (const [project, count] of job.composition.projects) add(project, count, job);
    if (job.composition.outside > 0) add(null, job.composition.outside, job);
  }
  return [...byProject.values()].sort(
    (a, b) =>
      b.waiting - a.waiting ||
      (a.oldestEnqueuedAt ?? Infinity) - (b.oldestEnqueuedAt ?? Infinity) ||
      b.failed - a.failed ||
      b.recentlyApplied - a.recentlyApplied,
  );
}
