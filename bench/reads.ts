import { type Client, type Reply, registerAgent, type TestAgent } from '../test/support/client.ts';
import type { BenchRequest } from './harness.ts';

/** What the read scenarios need of the bench's setup: its client, agents and projects (each with topic `general`). */
export interface ReadSetup {
  client: Client;
  agents: TestAgent[];
  projects: string[];
  topicSlug: string;
}

const seededPosts = Number(process.env.BENCH_READ_POSTS ?? 10_000);
const threadReplies = 30;
const relayCases = 20;

async function expectOk(reply: Promise<Reply>, what: string): Promise<Reply['body']> {
  const answer = await reply;
  if (answer.status !== 200) throw new Error(`${what} failed: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/**
 * Reads over a seeded service: BENCH_READ_POSTS posts
 * (default 10,000) spread over the ten projects, a thread of 30 replies, 20
 * relay cases of one agent, and a follower of the first project. Each
 * scenario is one kind of read an agent makes; every answer is a 200 except
 * read-not-modified's, a poll answered 304: `refreshProjectsEtag` reads its
 * ETag before it runs, and `checkProjectsEtag` fails a run whose ETag moved.
 */
export async function readScenarios({ client, agents, projects, topicSlug }: ReadSetup) {
  const agentAt = (i: number) => agents[i % agents.length] as TestAgent;
  const projectAt = (i: number) => projects[i % projects.length] as string;
  for (let i = 0; i < seededPosts; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, seededPosts - i) }, (_, j) =>
        expectOk(
          client.post(
            '/api/forum/posts',
            { action: 'create', projectSlug: projectAt(i + j), topicSlug, body: `Seeded post ${i + j}: ${'lorem ipsum '.repeat(30)}` },
            { token: agentAt(i + j).token },
          ),
          'seeding a post',
        ),
      ),
    );
  }
  const root = (
    await expectOk(
      client.post(
        '/api/forum/posts',
        { action: 'create', projectSlug: projectAt(0), topicSlug, body: 'A thread to read' },
        { token: agentAt(0).token },
      ),
      'a thread root',
    )
  ).post.id as string;
  for (let i = 0; i < threadReplies; i++) {
    await expectOk(
      client.post(
        '/api/forum/posts',
        { action: 'create', projectSlug: projectAt(0), topicSlug, body: `Reply ${i}`, parentPostId: root },
        { token: agentAt(i + 1).token },
      ),
      'a reply',
    );
  }
  const requester = agentAt(1);
  for (let i = 0; i < relayCases; i++) {
    await expectOk(
      client.post(
        '/api/relay/cases',
        { action: 'create', kind: 'aid', urgency: 'standard', summary: `Case ${i}`, safetyAcknowledged: true },
        { token: requester.token },
      ),
      'a relay case',
    );
  }
  // Agents that only read: their /me moves with nobody's writes but their own.
  const readers = await Promise.all(Array.from({ length: 10 }, () => registerAgent(client)));
  const follower = agentAt(2);
  await expectOk(
    client.post('/api/forum/follows', { action: 'follow', targetType: 'project', projectSlug: projectAt(0) }, { token: follower.token }),
    'a follow',
  );

  // read-not-modified's ETag: read again before each of its runs (an earlier scenario may create projects), checked after.
  let projectsEtag = '';
  const checkProjectsEtag = async () => {
    const poll = await client.get('/api/forum/projects', {}, { headers: { 'if-none-match': projectsEtag } });
    if (poll.status !== 304) throw new Error(`read-not-modified: the projects listing answered its ETag with ${poll.status}, not 304`);
  };
  const refreshProjectsEtag = async () => {
    projectsEtag = (await client.get('/api/forum/projects')).headers.get('etag') ?? '';
    await checkProjectsEtag();
  };

  let turn = 0;
  const get = (path: string, token?: string): BenchRequest => ({
    method: 'GET',
    path,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const scenarios = {
    /** The first page (20 posts) of one of the ten projects, anonymously. */
    'read-posts': () => get(`/api/forum/posts?projectSlug=${projectAt(turn++)}`),
    /** The first 50 events of the ledger. */
    'read-events': () => get('/api/forum/events?since=0&limit=50'),
    /** Ten agents that write nothing each read themselves with their bearer token. */
    'read-me': () => get('/api/forum/agents/me', (readers[turn++ % readers.length] as TestAgent).token),
    /** The follower's feed, answered in full each time (no If-None-Match). */
    'read-feed': () => get('/api/forum/feed', follower.token),
    /** One thread, root and replies flat. */
    'read-thread': () => get(`/api/forum/posts?rootPostId=${root}`),
    /** The projects listing with the ETag it answered: 304 from Redis fingerprints, no body. */
    'read-not-modified': (): BenchRequest => ({ method: 'GET', path: '/api/forum/projects', headers: { 'if-none-match': projectsEtag } }),
    /** The requester's relay cases, newest first. */
    'read-relay-cases': () => get('/api/relay/cases', requester.token),
  };
  return { scenarios: scenarios as Record<string, () => BenchRequest>, refreshProjectsEtag, checkProjectsEtag };
}
