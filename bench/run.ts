import { randomUUID } from 'node:crypto';
import { createProject, registerAgent, type TestAgent } from '../test/support/client.ts';
import { load, startTarget, type BenchRequest, type BenchResult } from './harness.ts';
import { ledgerGrowth } from './growth/ledger.ts';
import { searchGrowth } from './growth/search.ts';
import { readScenarios } from './reads.ts';
import { cacheCounts, reportReadsWhileWriting, WHILE_WRITING, type CacheCounts } from './readsWhileWriting.ts';
import { report } from './report.ts';
import { loadSettings } from '../config/settings.ts';
import { partitionOf } from '../src/pipeline/partitions.ts';
import { projectPartition } from '../src/routes/forum/partitions.ts';

/**
 * `npm run bench [-- scenario...]`: many agents writing through the public
 * HTTP API at once. Prints per scenario requests/s, latency percentiles,
 * errors, CPU milliseconds per request of the api, worker, Postgres primary
 * and replica and each Redis node (/proc), Redis commands per request
 * (INFO commandstats) and Postgres work per request (pg_stat).
 * BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_AGENTS, BENCH_LAYOUT (single |
 * split), BENCH_WORKERS (worker processes when split), BENCH_RATE (a fixed
 * arrival rate, requests/s, instead of as fast as answered), BENCH_WRITE_RATE
 * (posts/s beside each `read-*-while-writing` scenario, default 300),
 * BENCH_WARMUP_SECONDS (each scenario driven unmeasured first, default 2) and
 * BENCH_LOG_LEVEL (shows the service processes' logs) tune the run; BENCH_TOPOLOGY=1 runs
 * on the engines of `npm run topology -- up` (see bench/harness.ts).
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const agentCount = Number(process.env.BENCH_AGENTS ?? 50);
const layout = process.env.BENCH_LAYOUT === 'split' ? 'split' : 'single';
const workers = Number(process.env.BENCH_WORKERS ?? 1);
const rate = Number(process.env.BENCH_RATE ?? 0);
const writeRate = Number(process.env.BENCH_WRITE_RATE ?? 300);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);

// `search-growth` grows a database of its own to a million agents and projects (bench/growth/search.ts): none of the setup below.
if (process.argv.slice(2).includes('search-growth')) {
  await searchGrowth();
  process.exit(0);
}
// `ledger-growth` grows one project's ledger to a million leaves (bench/growth/ledger.ts), then search as above: both tables in one run.
if (process.argv.slice(2).includes('ledger-growth')) {
  await ledgerGrowth();
  await searchGrowth();
  process.exit(0);
}

// The operator credential reads the target's /metrics: the read cache's hits and misses per scenario.
const operatorToken = `bench-operator-${randomUUID()}`;
const target = await startTarget(layout, { OPERATOR_TOKEN: operatorToken }, workers);
const agents: TestAgent[] = [];
const topicSlug = 'general';
async function openTopic(agent: TestAgent, projectSlug: string): Promise<void> {
  const reply = await target.client.post(
    '/api/forum/topics',
    { action: 'create', projectSlug, title: 'General', topicSlug },
    { token: agent.token },
  );
  if (reply.status !== 200) throw new Error(`topic setup failed: ${JSON.stringify(reply.body)}`);
}
for (let i = 0; i < agentCount; i++) agents.push(await registerAgent(target.client));
// Ten projects with a topic each: the load testers' "many projects"; the first is also the hot one.
// Spread evenly over the API's partition queues: random slugs split ten projects 7/3 or worse in a third of runs,
// and at 8/2 a post cost a fifth more CPU at a fifth less rate than at 5/5 (docs/benchmarks.md, sixth round).
// The services' own count (their environment is this one's), default included.
const { partitions } = loadSettings();
const evenlySpread = (i: number): string => {
  for (;;) {
    const slug = `p-${randomUUID().slice(0, 12)}`;
    if (partitionOf(projectPartition(slug), partitions) === i % partitions) return slug;
  }
};
const projects: string[] = [];
for (let i = 0; i < 10; i++) {
  const owner = agents[i % agents.length] as TestAgent;
  const slug = await createProject(target.client, owner, evenlySpread(i));
  await openTopic(owner, slug);
  projects.push(slug);
}
const hotProject = projects[0] as string;
let turn = 0;
const nextAgent = (): TestAgent => agents[turn++ % agents.length] as TestAgent;
/** Every write carries its own retry key, as real clients send. */
const post = (path: string, token: string, fields: Record<string, string>): BenchRequest => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': randomUUID() },
  body: JSON.stringify(fields),
});

// A thousand posts to vote on, and a follower whose feed and event polls are answered 304.
const votable: string[] = [];
for (let i = 0; i < 1000; i += 50) {
  const created = await Promise.all(
    Array.from({ length: 50 }, async (_, j) => {
      const reply = await target.client.post(
        '/api/forum/posts',
        { action: 'create', projectSlug: projects[(i + j) % projects.length] ?? hotProject, topicSlug, body: `Votable ${i + j}` },
        { token: nextAgent().token },
      );
      return reply.body.post.id as string;
    }),
  );
  votable.push(...created);
}
const poller = nextAgent();
await target.client.post(
  '/api/forum/follows',
  { action: 'follow', targetType: 'project', projectSlug: hotProject },
  { token: poller.token },
);
const pollPaths = [`/api/forum/events?since=0&limit=1&projectSlug=${hotProject}`, '/api/forum/feed?limit=1'];
let pollEtags: string[] = [];
/** The polls' ETags as of now (earlier scenarios' writes change the events poll's). */
async function refreshPollEtags(): Promise<void> {
  const read = () =>
    Promise.all(
      pollPaths.map(
        async (path) =>
          (await fetch(`${target.url}${path}`, { headers: { authorization: `Bearer ${poller.token}` } })).headers.get('etag') ?? '',
      ),
    );
  // Wait until the last writes are published and the answers stand still.
  for (let previous = ''; ; await new Promise((resolve) => setTimeout(resolve, 300))) {
    pollEtags = await read();
    if (pollEtags.join() === previous) return;
    previous = pollEtags.join();
  }
}

function conditionalRead(): BenchRequest {
  const i = turn++ % pollPaths.length;
  return {
    method: 'GET',
    path: pollPaths[i] as string,
    headers: { authorization: `Bearer ${poller.token}`, 'if-none-match': pollEtags[i] as string },
  };
}

const scenarios: Record<string, () => BenchRequest> = {
  /** Half project creations by any agent, half topic creations by the hot project's owner. */
  'projects-and-topics': () => {
    const agent = nextAgent();
    return turn % 2 === 0
      ? post('/api/forum/projects', agent.token, { action: 'create', slug: `b-${randomUUID()}`, name: 'Bench project' })
      : post('/api/forum/topics', (agents[0] as TestAgent).token, {
          action: 'create',
          projectSlug: hotProject,
          title: `Topic ${randomUUID()}`,
        });
  },
  /** Posts spread over ten projects. */
  'posts-many-projects': () =>
    post('/api/forum/posts', nextAgent().token, {
      action: 'create',
      projectSlug: projects[turn % projects.length] ?? hotProject,
      topicSlug,
      body: `Bench post ${randomUUID()}`,
    }),
  /** Every agent posting into one project: one partition, strictly serialized. */
  'posts-hot-project': () =>
    post('/api/forum/posts', nextAgent().token, { action: 'create', projectSlug: hotProject, topicSlug, body: `Hot post ${randomUUID()}` }),
  /** Votes spread over a thousand posts. */
  votes: () =>
    post('/api/forum/votes', nextAgent().token, {
      action: 'cast',
      postId: votable[turn % votable.length] ?? '',
      value: turn % 3 === 0 ? 'contest' : 'support',
    }),
  /** Flags on the same thousand posts, every agent in turn on one post, then the next: new flags, and the third reporter quarantines the post. */
  flags: () => {
    const agent = nextAgent();
    return post('/api/forum/flags', agent.token, {
      action: 'create',
      postId: votable[Math.floor(turn / agents.length) % votable.length] ?? '',
      reasonCode: turn % 2 === 0 ? 'spam' : 'off-topic',
    });
  },
  /** Event and feed polls that nothing has changed since: 304 from Redis. */
  'conditional-reads': () => conditionalRead(),
  /** What a busy forum sees: 40% posts over ten projects, 30% votes, 10% follows, 20% conditional reads. */
  mixed: () => {
    const slot = turn % 10;
    if (slot < 4) return scenarios['posts-many-projects']!();
    if (slot < 7) return scenarios.votes!();
    // Following again what one follows is not an error: follows stay valid whatever the order.
    if (slot < 8)
      return post('/api/forum/follows', nextAgent().token, {
        action: 'follow',
        targetType: 'project',
        projectSlug: projects[turn % projects.length] ?? hotProject,
      });
    return conditionalRead();
  },
};

let reads: Awaited<ReturnType<typeof readScenarios>> | undefined;
const readNames = ['read-posts', 'read-events', 'read-me', 'read-feed', 'read-thread', 'read-relay-cases', 'read-not-modified'];
const asked = process.argv.slice(2);
// Read scenarios seed thousands of posts first: only when asked for by name, or when every scenario runs.
if (asked.length === 0 || asked.some((name) => readNames.includes(name.replace(WHILE_WRITING, '')))) {
  reads = await readScenarios({ client: target.client, agents, projects, topicSlug });
  Object.assign(scenarios, reads.scenarios);
  // The same reads while writers post into the same projects at BENCH_WRITE_RATE; writes-alone is what those writes cost by themselves.
  for (const name of readNames) scenarios[`${name}${WHILE_WRITING}`] = reads.scenarios[name] as () => BenchRequest;
  scenarios['writes-alone'] = scenarios['posts-many-projects'] as () => BenchRequest;
}
const writers = { next: scenarios['posts-many-projects'] as () => BenchRequest, rate: writeRate, connections: 100 };
const chosen = asked.filter((name) => name in scenarios);
// Measuring reads while writing needs the writes' own cost to take off.
if (chosen.some((name) => name.endsWith(WHILE_WRITING)) && !chosen.includes('writes-alone')) chosen.unshift('writes-alone');
const results: BenchResult[] = [];
const cache = new Map<string, CacheCounts>();
for (const name of chosen.length > 0 ? chosen : Object.keys(scenarios)) {
  // Polls carry ETags read just before they are measured: an earlier scenario, or a warm-up that writes (mixed), may move them.
  const polls = name === 'conditional-reads' || name === 'mixed';
  const notModified = name.startsWith('read-not-modified');
  const options =
    name === 'writes-alone'
      ? { connections: writers.connections, seconds, rate: writeRate }
      : { connections, seconds, rate, ...(name.endsWith(WHILE_WRITING) ? { background: writers } : {}) };
  // Unmeasured first: the JIT warms to the scenario, and what the seeding left running (the ledger publishing thousands of posts) ends.
  if (warmupSeconds > 0) await load(name, target, scenarios[name] as () => BenchRequest, { ...options, seconds: warmupSeconds });
  if (polls) await refreshPollEtags();
  if (notModified) await reads?.refreshProjectsEtag();
  const cacheBefore = await cacheCounts(target, operatorToken);
  results.push(await load(name, target, scenarios[name] as () => BenchRequest, options));
  // Its figures are 304s' only if the ETag it sent still stands.
  if (notModified) await reads?.checkProjectsEtag();
  const cacheAfter = await cacheCounts(target, operatorToken);
  cache.set(name, { hits: cacheAfter.hits - cacheBefore.hits, misses: cacheAfter.misses - cacheBefore.misses });
}
await target.stop();
const redis = target.clusterSeeds.length > 0 ? `Redis Cluster (${target.watched.redis.length} nodes)` : 'one Redis';
const postgres = target.replicaUrls.length > 0 ? `Postgres primary + ${target.replicaUrls.length} replica(s)` : 'one Postgres';
console.log(
  `layout=${layout}${layout === 'split' ? ` workers=${workers}` : ' (the api column is the one process with both roles)'} ` +
    `${redis}, ${postgres} connections=${connections}${rate ? ` rate=${rate}/s` : ''} agents=${agentCount} ` +
    `seconds=${seconds} node=${process.version}`,
);
report(results);
reportReadsWhileWriting(results, cache);
process.exit(0);
