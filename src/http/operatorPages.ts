import type { Server } from '@hapi/hapi';
import type { Queue } from 'bullmq';
import type { ApiContext } from './context.ts';
import { ApiError } from '../errors.ts';
import { projectKey } from '../pipeline/batchName.ts';
import { backlogByProject, readJobSummaries, type JobSummary, type ReadLimits } from '../operator/projectBacklog.ts';
import { quantile, readProjectCommands, type CommandActivity } from '../operator/projectCommands.ts';
import { partitionOf } from '../pipeline/partitions.ts';
import { duration, facts, link, page, table, type Cell } from './operatorHtml.ts';
import { slugParam } from './params.ts';

export const PROJECTS_PATH = '/admin/projects';

/** What the projects page reads per partition queue: every pending job up to a bound, and the newest done ones. */
const LIST_LIMITS: ReadLimits = { pending: 1000, failed: 200, completed: 100 };
/** What a project's page reads of its partition queue. */
const PROJECT_LIMITS: ReadLimits = { pending: 500, failed: 200, completed: 500 };
const SHOWN_COMMANDS = 100;
const PROJECTS_COLUMNS = [
  'Project',
  'Waiting',
  'Oldest waiting',
  'Failed (kept 7 days)',
  'Recently applied',
  'Partition',
  'Worker serving it',
];

const queueLink = (queue: string) => link(`/admin/queues/queue/${queue}`, queue);

/** Who holds the partition's active job: a worker name, `unnamed worker` when workers carry none, `idle` when nothing runs. */
function servingWorker(jobs: readonly JobSummary[]): string {
  const active = jobs.find((job) => job.state === 'active');
  return active ? (active.worker ?? 'unnamed worker') : 'idle';
}

function projectsPage(queues: readonly Queue[], jobsByQueue: readonly JobSummary[][], partitions: number, now: number): string {
  const backlog = backlogByProject(jobsByQueue.flat());
  const rows: Cell[][] = backlog.map((entry) => {
    const partition = entry.project === null ? null : partitionOf(projectKey(entry.project), partitions);
    const queue = partition === null ? undefined : queues[partition];
    return [
      entry.project === null ? 'commands outside projects' : link(`${PROJECTS_PATH}/${entry.project}`, entry.project),
      entry.waiting,
      duration(entry.oldestEnqueuedAt === null ? null : now - entry.oldestEnqueuedAt),
      entry.failed,
      entry.recentlyApplied,
      queue ? queueLink(queue.name) : null,
      partition === null ? null : servingWorker(jobsByQueue[partition] ?? []),
    ];
  });
  const waiting = backlog.reduce((sum, e) => sum + e.waiting, 0);
  const body = `${facts([
    ['projects in the queues', backlog.filter((e) => e.project !== null).length],
    ['commands waiting', waiting],
    ['partition queues', queues.length],
  ])}
<h2>Projects by backlog</h2>
${table(PROJECTS_COLUMNS, rows, 'No project has commands in the queues.')}
<p class="note">Waiting counts commands enqueued and not yet applied (waiting, delayed for a retry, or in the batch
being applied), up to ${LIST_LIMITS.pending} jobs per partition. Recently applied counts the commands of the newest
${LIST_LIMITS.completed} completed jobs per partition. The same figures, for the busiest projects, are in /metrics
(agora_project_*).</p>`;
  return page('Agora projects', body);
}

function projectPage(
  slug: string,
  queue: Queue,
  partitionJobs: readonly JobSummary[],
  commands: readonly CommandActivity[],
  now: number,
): string {
  const pending = commands.filter((c) => c.state !== 'completed' && c.state !== 'failed');
  const done = commands.filter((c) => c.state === 'completed' && c.finishedAt !== null).map((c) => (c.finishedAt ?? 0) - c.enqueuedAt);
  const oldest = pending.reduce((min, c) => Math.min(min, c.enqueuedAt), Infinity);
  const recent = [...commands].sort((a, b) => b.enqueuedAt - a.enqueuedAt).slice(0, SHOWN_COMMANDS);
  const failures = commands
    .filter((c) => c.failedReason !== null)
    .sort((a, b) => (b.finishedAt ?? b.enqueuedAt) - (a.finishedAt ?? a.enqueuedAt));
  const since = (at: number | null) => (at === null ? null : `${duration(now - at)} ago`);
  const between = (from: number | null, to: number | null) => (from === null || to === null ? null : duration(to - from));
  const body = `${facts([
    ['commands waiting', pending.length],
    ['oldest waiting', pending.length > 0 ? duration(now - oldest) : null],
    ['failed (kept 7 days)', commands.filter((c) => c.state === 'failed').length],
    ['enqueue to done, p50', duration(quantile(done, 0.5))],
    ['enqueue to done, p99', duration(quantile(done, 0.99))],
  ])}
<p>Partition ${queueLink(queue.name).markup}, worker serving it: ${servingWorker(partitionJobs)}.</p>
<h2>Recent commands</h2>
${table(
  ['State', 'Command', 'Type', 'Agent', 'Enqueued', 'Waited', 'Applied in', 'Enqueue to done', 'Attempts', 'Worker'],
  recent.map((c) => [
    c.state,
    c.commandId,
    c.type,
    c.agent,
    since(c.enqueuedAt),
    between(c.enqueuedAt, c.startedAt),
    between(c.startedAt, c.finishedAt),
    between(c.enqueuedAt, c.finishedAt),
    c.attempts,
    c.worker,
  ]),
  'No command of this project is in its partition queue (completed jobs are kept an hour).',
)}
<h2>Failures</h2>
${table(
  ['Command', 'Type', 'State', 'Attempts', 'Reason', 'When'],
  failures.map((c) => [
    c.commandId,
    c.type,
    c.state === 'failed' ? 'failed on every attempt' : `retrying (${c.state})`,
    c.attempts,
    c.failedReason,
    since(c.finishedAt ?? c.startedAt),
  ]),
  'No failure among the jobs kept for this project.',
)}
<p class="note">Read from partition ${queue.name}: its ${PROJECT_LIMITS.pending} oldest pending jobs and
${PROJECT_LIMITS.completed} newest completed ones. Parameters of commands are not shown; the partition queue's page has
the jobs themselves.</p>`;
  return page(`Project ${slug}`, body);
}

/** The operators' pages per project (behind OPERATOR_TOKEN with the rest of /admin). */
export function registerProjectPages(server: Server, ctx: ApiContext): void {
  const queues = ctx.dispatcher.partitionQueues;
  server.route({
    method: 'GET',
    path: PROJECTS_PATH,
    handler: async (_request, h) => {
      const jobsByQueue = await Promise.all(queues.map((queue) => readJobSummaries(queue, LIST_LIMITS)));
      return h.response(projectsPage(queues, jobsByQueue, ctx.settings.partitions, Date.now())).type('text/html; charset=utf-8');
    },
  });
  server.route({
    method: 'GET',
    path: `${PROJECTS_PATH}/{slug}`,
    handler: async (request, h) => {
      const slug = String(request.params.slug);
      if (slugParam.validate(slug).error) throw new ApiError('not_found', 'no such project slug');
      const queue = queues[partitionOf(projectKey(slug), ctx.settings.partitions)];
      if (!queue) throw new ApiError('not_found', 'no such partition');
      const [partitionJobs, commands] = await Promise.all([
        readJobSummaries(queue, { pending: 1, failed: 0, completed: 0 }),
        readProjectCommands(queue, slug, PROJECT_LIMITS),
      ]);
      return h.response(projectPage(slug, queue, partitionJobs, commands, Date.now())).type('text/html; charset=utf-8');
    },
  });
}
