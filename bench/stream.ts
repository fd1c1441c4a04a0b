import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import { createProject, registerAgent, type TestAgent } from '../test/support/client.ts';
import { openOrm } from '../src/db/orm.ts';
import { startTarget, type BenchTarget } from './harness.ts';
import { cpuBetween, snapshot } from './processCpu.ts';

/**
 * `npm run bench:stream`: the event stream under load. One API process (and
 * one worker process) holds BENCH_STREAMS (2000) open streams, each following
 * one of BENCH_PROJECTS (100) projects, while agents post over those projects
 * at BENCH_RATE (500) posts/s. Prints commit-to-client latency (the event's
 * createdAt, stamped in the post's transaction, to its arrival at the
 * client), API CPU per delivered event (against the same rate without
 * streams), memory per idle stream (API RSS), and posting throughput at full
 * speed with and without the streams open. BENCH_SECONDS per phase (15).
 */
const streamCount = Number(process.env.BENCH_STREAMS ?? 2000);
const projectCount = Number(process.env.BENCH_PROJECTS ?? 100);
const rate = Number(process.env.BENCH_RATE ?? 500);
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const topicSlug = 'general';

const target = await startTarget('split', { STREAM_MAX_PER_PROCESS: String(streamCount * 2) }, 1);
const apiPid = target.watched.api[0] ?? 0;
const agents: TestAgent[] = [];
for (let i = 0; i < 50; i++) agents.push(await registerAgent(target.client));
const projects: string[] = [];
for (let i = 0; i < projectCount; i += 10) {
  projects.push(
    ...(await Promise.all(
      Array.from({ length: Math.min(10, projectCount - i) }, async (_, j) => {
        const owner = agents[(i + j) % agents.length] as TestAgent;
        const slug = await createProject(target.client, owner);
        const reply = await target.client.post(
          '/api/forum/topics',
          { action: 'create', projectSlug: slug, title: 'General', topicSlug },
          { token: owner.token },
        );
        if (reply.status !== 200) throw new Error(`topic setup failed: ${JSON.stringify(reply.body)}`);
        return slug;
      }),
    )),
  );
}

/** Busy and total jiffies of the whole machine (every core), from /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  // idle and iowait
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

/** Resident memory of a process, in bytes. */
function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The stream clients, in their own thread (bench/streamClients.ts). */
class Streams {
  private readonly worker = new Worker(new URL('./streamClients.ts', import.meta.url), { workerData: { url: target.url, projects } });

  private ask<T>(message: Record<string, unknown>, answer: string): Promise<T> {
    return new Promise((resolve) => {
      const listen = (reply: Record<string, unknown>) => {
        if (!(answer in reply)) return;
        this.worker.off('message', listen);
        resolve(reply as T);
      };
      this.worker.on('message', listen);
      this.worker.postMessage(message);
    });
  }

  open(count: number): Promise<{ opened: number }> {
    return this.ask({ open: count }, 'opened');
  }

  record(on: boolean): void {
    this.worker.postMessage({ record: on });
  }

  report(): Promise<{ delivered: number; latencies: number[] }> {
    return this.ask({ report: true }, 'delivered');
  }

  close(): Promise<unknown> {
    return this.ask({ close: true }, 'closed');
  }

  stop(): Promise<number> {
    return this.worker.terminate();
  }
}

/** Commit-to-ledger delay of the posts created since `from` (publishedAt - createdAt, in ms): the publisher's share of the latency. */
async function ledgerDelays(from: Date): Promise<{ p50: number; p99: number }> {
  const orm = await openOrm(target.databaseUrl, { poolMax: 1 });
  try {
    const [row] = await orm.em.fork().execute<{ p50: number; p99: number }[]>(
      `select percentile_cont(0.5) within group (order by extract(epoch from published_at - created_at)) * 1000 as p50,
              percentile_cont(0.99) within group (order by extract(epoch from published_at - created_at)) * 1000 as p99
         from ledger_event where type = 'post.created' and created_at >= ?`,
      [from],
    );
    return { p50: Math.round(row?.p50 ?? 0), p99: Math.round(row?.p99 ?? 0) };
  } finally {
    await orm.close();
  }
}

let turn = 0;
const nextPost = () => {
  const agent = agents[turn % agents.length] as TestAgent;
  const projectSlug = projects[turn++ % projects.length] as string;
  return {
    method: 'POST' as const,
    path: '/api/forum/posts',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}`, 'idempotency-key': randomUUID() },
    body: JSON.stringify({ action: 'create', projectSlug, topicSlug, body: `Streamed post ${randomUUID()}` }),
  };
};

interface Posting {
  posts: number;
  postsPerSecond: number;
  errors: number;
  apiCpuMs: number;
  /** Share of the machine's cores busy meanwhile (every process: the service, Postgres, Redis, this bench and its stream clients). */
  machineBusy: number;
}

/** Posts for `seconds`, at `overallRate` posts/s (or as fast as `connections` go), counting the API process's CPU. */
async function posting(bench: BenchTarget, overallRate?: number): Promise<Posting> {
  const before = snapshot(bench.watched);
  const machineBefore = machineTicks();
  let errors = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: bench.url,
        connections,
        duration: seconds,
        ...(overallRate ? { overallRate } : {}),
        requests: [{ setupRequest: (request) => ({ ...request, ...nextPost() }) }],
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    instance.on('response', (_client, status) => {
      if (status >= 400) errors++;
    });
  });
  const cpu = cpuBetween(before, snapshot(bench.watched));
  const machine = machineTicks();
  return {
    posts: result.requests.total,
    postsPerSecond: Math.round(result.requests.total / seconds),
    errors: errors + result.errors + result.timeouts,
    apiCpuMs: cpu.groups.api,
    machineBusy: (machine.busy - machineBefore.busy) / Math.max(1, machine.total - machineBefore.total),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0);
}

/** Reads for a few seconds: enough allocation that the API process has touched every page of its young generation. */
async function warmHeap(): Promise<void> {
  await new Promise((resolve, reject) =>
    autocannon({ url: `${target.url}/api/forum/events?limit=100&view=full`, connections: 8, duration: 4 }, (error, done) =>
      error ? reject(error) : resolve(done),
    ),
  );
}

const streams = new Streams();
// Half the streams first (the process's first requests grow its heap and code), then the other half: their RSS delta is what an idle stream costs.
// RSS also counts each page of V8's young generation (tens of MB) the first time it is used, once: reads fill it before the measure.
await streams.open(streamCount / 2);
await warmHeap();
await pause(3000);
// The second half in steps, each printed: the heap grows in page ranges, so some steps take more than their share.
const steps = 5;
const perStreamSteps: number[] = [];
const rssHalf = rss(apiPid);
let rssBefore = rssHalf;
for (let i = 0; i < steps; i++) {
  await streams.open(streamCount / 2 / steps);
  await pause(1500);
  const rssAfter = rss(apiPid);
  perStreamSteps.push((rssAfter - rssBefore) / (streamCount / 2 / steps));
  rssBefore = rssAfter;
}
const rssPerStream = (rssBefore - rssHalf) / (streamCount / 2);

const deliveredBefore = (await streams.report()).delivered;
streams.record(true);
const postingFrom = new Date();
const withStreams = await posting(target, rate);
await pause(2000);
streams.record(false);
const received = await streams.report();
const delivered = received.delivered - deliveredBefore;
const latencies = received.latencies.sort((a, b) => a - b);
const ledger = await ledgerDelays(postingFrom);
const maxWithStreams = await posting(target);
await pause(2000);
await streams.close();
await streams.stop();
await pause(3000);
const withoutStreams = await posting(target, rate);
const maxWithoutStreams = await posting(target);
await target.stop();

// The streams' share: API CPU with streams less what the same number of posts cost without them.
const postsCpuWithout = withoutStreams.posts > 0 ? (withoutStreams.apiCpuMs * withStreams.posts) / withoutStreams.posts : 0;
const apiCpuPerEvent = (withStreams.apiCpuMs - postsCpuWithout) / Math.max(1, delivered);
console.log(
  `streams=${streamCount} projects=${projectCount} rate=${rate}/s seconds=${seconds} connections=${connections} ` +
    `node=${process.version} (API and worker in separate processes; this bench client shares the machine's cores)`,
);
console.log('| measure | value |');
console.log('|---|---|');
console.log(`| streams open | ${streamCount} |`);
console.log(
  `| memory per idle stream (API RSS delta over the second ${streamCount / 2} streams, opened in ${steps} steps: each ` +
    `step's) | ${(rssPerStream / 1024).toFixed(1)} KB (${perStreamSteps.map((b) => (b / 1024).toFixed(1)).join(', ')}) |`,
);
console.log(
  `| posts at ${rate}/s offered: achieved with streams / without | ${withStreams.postsPerSecond}/s / ` +
    `${withoutStreams.postsPerSecond}/s (${withStreams.errors + withoutStreams.errors} errors) |`,
);
console.log(`| events delivered to clients | ${delivered} (${Math.round(delivered / seconds)}/s) |`);
console.log(
  `| commit-to-client latency p50 / p99 / max | ${percentile(latencies, 50)} / ${percentile(latencies, 99)} / ${latencies.at(-1) ?? 0} ms |`,
);
console.log(`| of which commit-to-ledger (publishedAt - createdAt) p50 / p99 | ${ledger.p50} / ${ledger.p99} ms |`);
console.log(
  `| API CPU at ${rate}/s: with streams / without | ${(withStreams.apiCpuMs / seconds / 10).toFixed(1)}% / ` +
    `${(withoutStreams.apiCpuMs / seconds / 10).toFixed(1)}% of a core |`,
);
console.log(
  `| machine busy at ${rate}/s (all ${cpus().length} cores, every process): with streams / without | ` +
    `${(withStreams.machineBusy * 100).toFixed(0)}% / ${(withoutStreams.machineBusy * 100).toFixed(0)}% |`,
);
console.log(
  `| API CPU per delivered event ((CPU with streams - CPU of as many posts without) / delivered) | ${(apiCpuPerEvent * 1000).toFixed(1)} µs |`,
);
console.log(
  `| posting throughput at full speed: with streams / without | ${maxWithStreams.postsPerSecond}/s / ` +
    `${maxWithoutStreams.postsPerSecond}/s ` +
    `(${(((maxWithStreams.postsPerSecond - maxWithoutStreams.postsPerSecond) / maxWithoutStreams.postsPerSecond) * 100).toFixed(1)}%) ` +
    '|',
);
process.exit(0);
