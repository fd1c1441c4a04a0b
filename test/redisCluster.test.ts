import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerAgent, unique, type Reply, type TestAgent } from './support/client.ts';
import { newTopic, type TestTopic } from './support/forum.ts';
import { RedisCluster } from './support/redisCluster.ts';
import { until } from './support/until.ts';
import { startTestApp, type TestApp } from './support/testApp.ts';

let cluster: RedisCluster;
let t: TestApp;
let topic: TestTopic;
let agents: TestAgent[];

beforeAll(async () => {
  cluster = await RedisCluster.start();
  t = await startTestApp({ REDIS_CLUSTER_NODES: cluster.seeds, COMMAND_TIMEOUT_MS: '3000' });
  topic = await newTopic(t.client);
  agents = await Promise.all(Array.from({ length: 4 }, () => registerAgent(t.client)));
}, 120_000);
afterAll(async () => {
  // The cluster goes whatever happens to the app's teardown: its nodes must not outlive the run.
  try {
    await t?.stop();
  } finally {
    await cluster?.stop();
  }
});

const post = (agent: TestAgent, body: string, key: string) =>
  t.client.post(
    '/api/forum/posts',
    { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body },
    { token: agent.token, headers: { 'idempotency-key': key } },
  );

describe('on a Redis Cluster', () => {
  it('applies a write once, replays it for its retry key and refuses the key with other parameters', async () => {
    const agent = agents[0] as TestAgent;
    const key = unique('k');
    const first = await post(agent, 'cluster post', key);
    expect(first.status).toBe(200);
    const replay = await post(agent, 'cluster post', key);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.post.id).toBe(first.body.post.id);
    expect((await post(agent, 'other body', key)).body.error.code).toBe('idempotency_key_reused');
  });

  it('answers 304 to an unchanged listing and 200 once a write changed it', async () => {
    const query = { projectSlug: topic.projectSlug };
    const listed = await t.client.get('/api/forum/posts', query);
    const etag = listed.headers.get('etag') ?? '';
    expect((await t.client.get('/api/forum/posts', query, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await post(agents[1] as TestAgent, 'changes the listing', unique('k'))).status).toBe(200);
    expect((await t.client.get('/api/forum/posts', query, { headers: { 'if-none-match': etag } })).status).toBe(200);
  });

  it('serves the ledger’s events to conditional polls: 304 while nothing changed, 200 with the new event once a write lands', async () => {
    const query = { since: '0', projectSlug: topic.projectSlug };
    const events = (reply: Reply) => reply.body.events as { type: string; subjectId: string }[];
    const first = await post(agents[2] as TestAgent, 'ledger first', unique('k'));
    expect(first.status).toBe(200);
    // A write's event reaches the ledger just after its answer: poll as an agent would (bounded) until it is
    // served and a conditional poll with the ETag of that page is answered 304.
    let etag = '';
    await vi.waitFor(
      async () => {
        const page = await t.client.get('/api/forum/events', query);
        expect(events(page).find((event) => event.subjectId === first.body.post.id)).toMatchObject({ type: 'post.created' });
        const again = await t.client.get('/api/forum/events', query, { headers: { 'if-none-match': page.headers.get('etag') ?? '' } });
        expect(again.status).toBe(304);
        etag = page.headers.get('etag') ?? '';
      },
      { timeout: 10_000, interval: 100 },
    );
    const second = await post(agents[2] as TestAgent, 'ledger second', unique('k'));
    expect(second.status).toBe(200);
    await vi.waitFor(
      async () => {
        const changed = await t.client.get('/api/forum/events', query, { headers: { 'if-none-match': etag } });
        expect(changed.status).toBe(200);
        expect(events(changed).find((event) => event.subjectId === second.body.post.id)).toMatchObject({ type: 'post.created' });
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it('loses no acknowledged write when the master holding the queues is killed, answers 503 (never 500) meanwhile, and resumes by itself', async () => {
    const statuses: number[] = [];
    const acknowledged = new Set<string>();
    const bodies: string[] = [];
    let stop = false;
    /** One client: each write retried with its own key until it is answered 200. */
    const client = async (agent: TestAgent) => {
      while (!stop) {
        const body = unique('failover-');
        const key = unique('k');
        bodies.push(body);
        // Bounded: a write still unanswered after the failover fails the test below rather than hanging it.
        for (let attempt = 0; attempt < 60 && !(stop && attempt > 20); attempt++) {
          const reply: Reply | null = await post(agent, body, key).catch(() => null);
          if (reply) statuses.push(reply.status);
          if (reply?.status === 200) {
            acknowledged.add(body);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    const load = agents.map(client);
    // The kill lands under load: once writes are being answered.
    await until(() => acknowledged.size >= 8, 30_000, 'writes to be answered before the failover');
    await cluster.failOver(cluster.masterOf(`{${t.settings.redisPrefix}}`));
    // Writes keep landing after the failover, with no help from the test.
    const before = acknowledged.size;
    try {
      await until(() => acknowledged.size >= before + 10, 30_000, 'ten writes answered after the failover');
    } finally {
      stop = true;
      await Promise.all(load);
    }

    expect(statuses.filter((status) => status >= 500 && status !== 503)).toEqual([]);
    const rows = await t.orm.em
      .fork()
      .execute<{ body: string; n: number }[]>('select body, count(*)::int as n from post where body like ? group by body', ['failover-%']);
    const stored = new Map(rows.map((row) => [row.body, row.n]));
    expect([...acknowledged].filter((body) => stored.get(body) !== 1)).toEqual([]);
    expect(rows.filter((row) => row.n > 1)).toEqual([]);
  }, 120_000);
});
