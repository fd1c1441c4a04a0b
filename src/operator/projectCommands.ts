import { Job, type Queue } from 'bullmq';
import type { CommandBatch } from '../pipeline/command.ts';
import { projectKey } from '../pipeline/batchName.ts';
import { readJobSummaries, type JobSummary, type ReadLimits } from './projectBacklog.ts';

/** One command of a project as it went through the queue: what it was, who sent it, and its job's state and times. Never its parameters. */
export interface CommandActivity extends Omit<JobSummary, 'queue' | 'id' | 'composition'> {
  jobId: string;
  commandId: string;
  type: string;
  agent: string | null;
}

/**
 * The commands of one project in its partition queue: the jobs are picked
 * by their names (batchName), and only theirs are read in full, so a busy
 * partition shared with other projects costs one read per job of this one.
 */
export async function readProjectCommands(queue: Queue, slug: string, limits: ReadLimits): Promise<CommandActivity[]> {
  const summaries = (await readJobSummaries(queue, limits)).filter((job) => job.composition.projects.has(slug));
  const jobs = await Promise.all(summaries.map((summary) => Job.fromId<CommandBatch>(queue, summary.id)));
  const key = projectKey(slug);
  return summaries.flatMap(({ queue: _queue, id, composition: _composition, ...job }, i) =>
    (jobs[i]?.data.commands ?? [])
      .filter((command) => command.partitionKey === key)
      .map((command) => ({ ...job, jobId: id, commandId: command.commandId, type: command.type, agent: command.actor?.handle ?? null })),
  );
}

/** The q-quantile (0..1) of some durations, by nearest rank; null for none. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? null;
}
