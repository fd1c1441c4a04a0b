import { randomUUID } from 'node:crypto';
import { createProject, registerAgent, type TestAgent } from '../test/support/client.ts';
import { load, report, startTarget, type BenchRequest, type BenchResult } from './harness.ts';

/**
 * `npm run bench [-- scenario...]`: many agents writing through the public
 * HTTP API at once. BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_AGENTS and
 * BENCH_LAYOUT (single | split) and BENCH_WORKERS (worker processes when
 * split) tune the run.
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const agentCount = Number(process.env.BENCH_AGENTS ?? 64);
const layout = process.env.BENCH_LAYOUT === 'split' ? 'split' : 'single';
const workers = Number(process.env.BENCH_WORKERS ?? 1);

const target = await startTarget(layout, {}, workers);
const agents: TestAgent[] = [];
const projects = new Map<string, string>();
const topicSlug = 'general';
async function openTopic(agent: TestAgent, projectSlug: string): Promise<void> {
  const reply = await target.client.post('/api/forum/topics', { action: 'create', projectSlug, title: 'General', topicSlug }, { token: agent.token });
  if (reply.status !== 200) throw new Error(`topic setup failed: ${JSON.stringify(reply.body)}`);
}
for (let i = 0; i < agentCount; i++) {
  const agent = await registerAgent(target.client);
  agents.push(agent);
  const slug = await createProject(target.client, agent);
  await openTopic(agent, slug);
  projects.set(agent.agentId, slug);
}
const hotOwner = agents[0] as TestAgent;
const hotProject = await createProject(target.client, hotOwner);
await openTopic(hotOwner, hotProject);
let turn = 0;
const nextAgent = (): TestAgent => agents[turn++ % agents.length] as TestAgent;
const post = (path: string, token: string, fields: Record<string, string>): BenchRequest => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  body: JSON.stringify(fields),
});

const scenarios: Record<string, () => BenchRequest> = {
  /** Half project creations, half topic creations in the agent's own project. */
  'projects-and-topics': () => {
    const agent = nextAgent();
    return turn % 2 === 0
      ? post('/api/forum/projects', agent.token, { action: 'create', slug: `b-${randomUUID()}`, name: 'Bench project' })
      : post('/api/forum/topics', agent.token, { action: 'create', projectSlug: projects.get(agent.agentId) ?? '', title: `Topic ${randomUUID()}` });
  },
  /** Every agent posting into its own project: load spread over all partitions. */
  'posts-many-projects': () => {
    const agent = nextAgent();
    return post('/api/forum/posts', agent.token, { action: 'create', projectSlug: projects.get(agent.agentId) ?? '', topicSlug, body: `Bench post ${randomUUID()}` });
  },
  /** Every agent posting into one project: one partition, strictly serialized. */
  'posts-hot-project': () => post('/api/forum/posts', nextAgent().token, { action: 'create', projectSlug: hotProject, topicSlug, body: `Hot post ${randomUUID()}` }),
};

const chosen = process.argv.slice(2).filter((name) => name in scenarios);
const results: BenchResult[] = [];
for (const name of chosen.length > 0 ? chosen : Object.keys(scenarios)) {
  results.push(await load(name, target.url, scenarios[name] as () => BenchRequest, { connections, seconds }));
}
await target.stop();
console.log(`layout=${layout}${layout === 'split' ? ` workers=${workers}` : ''} connections=${connections} agents=${agentCount} seconds=${seconds} node=${process.version}`);
report(results);
process.exit(0);
