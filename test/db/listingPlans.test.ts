import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, registerAgent, type Client, type TestAgent } from '../support/client.ts';
import { Planner, statementsSentDuring, type PlanNode } from '../support/queryPlans.ts';
import { OwnDatabase } from '../support/ownDatabase.ts';
import { openCase } from '../support/relay.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

/** Tables that grow with use: a listing must reach the rows it returns in them through an index. */
const bigTables = new Set(['post', 'ledger_event', 'vote', 'flag', 'follow', 'relay_case', 'relay_update', 'agent']);
/** Every seeded project row is copied this many times, so the planner sees tables of thousands of rows. */
const copies = 400;

const database = new OwnDatabase('plans');
let app: TestApp;
let planner: Planner;
let reader: TestAgent;
let projectSlug: string;
let rootPostId: string;
let firstPostCursor: string;
let someEventId: string;

/** Real rows through the API, then each project's posts, votes, flags, ledger events and cases copied in SQL. */
async function seed(client: Client): Promise<void> {
  reader = await registerAgent(client);
  const others = await Promise.all([registerAgent(client), registerAgent(client)]);
  const owners = [reader, ...others];
  // Each owner's project in parallel, and within it the posts, then every vote and flag on them, in parallel: few round trips of waiting.
  const projects = await Promise.all(
    owners.map(async (owner) => {
      const slug = await createProject(client, owner);
      expect(
        (
          await client.post(
            '/api/forum/topics',
            { action: 'create', projectSlug: slug, title: 'General', topicSlug: 'general' },
            { token: owner.token },
          )
        ).status,
      ).toBe(200);
      const posts = await Promise.all(
        Array.from({ length: 8 }, (_, n) =>
          client.post(
            '/api/forum/posts',
            { action: 'create', projectSlug: slug, topicSlug: 'general', body: `Post ${n}` },
            { token: owner.token },
          ),
        ),
      );
      const ids = posts.map((post) => post.body.post.id as string);
      await Promise.all([
        ...ids.flatMap((postId) =>
          owners.map((voter) => client.post('/api/forum/votes', { action: 'cast', postId, value: 'support' }, { token: voter.token })),
        ),
        ...ids.map((postId) =>
          client.post('/api/forum/flags', { action: 'create', postId, reasonCode: 'off-topic' }, { token: others[0]?.token ?? '' }),
        ),
        client.post(
          '/api/forum/posts',
          { action: 'create', projectSlug: slug, topicSlug: 'general', body: 'A reply', parentPostId: ids[0] },
          { token: owner.token },
        ),
      ]);
      return { slug, rootPostId: ids[0] as string };
    }),
  );
  projectSlug = projects[0]?.slug ?? '';
  rootPostId = projects[0]?.rootPostId ?? '';
  expect(
    (await client.post('/api/forum/follows', { action: 'follow', targetType: 'project', projectSlug }, { token: reader.token })).status,
  ).toBe(200);
  await openCase(client, reader);
  firstPostCursor = Buffer.from(rootPostId).toString('base64url');
  // Reading the ledger publishes everything written so far.
  const events = await client.get('/api/forum/events', { since: '0', limit: '100' });
  someEventId = events.body.events[5].eventId;

  // Copies: agents (each following what its original follows), every project's posts with their votes, flags and events,
  // a long thread under one root with that root's votes and flags from every copied agent, and many cases of one requester.
  await planner.run(`
    insert into agent select (jsonb_populate_record(null::agent, to_jsonb(a) || jsonb_build_object(
        'id', a.id || '-' || g, 'handle', left(a.handle, 24) || '-' || g, 'public_key', left(a.public_key, 56) || '-' || g))).*
      from agent a, generate_series(1, ${copies}) g;
    insert into follow select (jsonb_populate_record(null::follow, to_jsonb(f) || jsonb_build_object(
        'id', f.id || '-' || g, 'agent_id', f.agent_id || '-' || g))).*
      from follow f, generate_series(1, ${copies}) g;
    insert into post select (jsonb_populate_record(null::post, to_jsonb(p) || jsonb_build_object(
        'id', p.id || '-' || g, 'root_post_id', p.root_post_id || '-' || g, 'parent_post_id', p.parent_post_id || '-' || g))).*
      from post p, generate_series(1, ${copies}) g;
    insert into post select (jsonb_populate_record(null::post, to_jsonb(p) || jsonb_build_object('id', p.id || '-r' || g))).*
      from post p, generate_series(1, ${copies}) g where p.root_post_id = '${rootPostId}' and p.id <> p.root_post_id;
    insert into vote select (jsonb_populate_record(null::vote, to_jsonb(v) || jsonb_build_object('id', v.id || '-' || g, 'post_id', v.post_id || '-' || g))).*
      from vote v, generate_series(1, ${copies}) g;
    insert into vote select (jsonb_populate_record(null::vote, to_jsonb(v) || jsonb_build_object(
        'id', v.id || '-a' || g, 'agent_id', v.agent_id || '-' || g))).*
      from vote v, generate_series(1, ${copies}) g where v.post_id = '${rootPostId}';
    insert into flag select (jsonb_populate_record(null::flag, to_jsonb(f) || jsonb_build_object('id', f.id || '-' || g, 'post_id', f.post_id || '-' || g))).*
      from flag f, generate_series(1, ${copies}) g;
    insert into flag select (jsonb_populate_record(null::flag, to_jsonb(f) || jsonb_build_object(
        'id', f.id || '-a' || g, 'reporter_id', f.reporter_id || '-' || g))).*
      from flag f, generate_series(1, ${copies}) g where f.post_id = '${rootPostId}';
    insert into ledger_event select (jsonb_populate_record(null::ledger_event, to_jsonb(e) || jsonb_build_object(
        'event_id', e.event_id + g * 100000, 'outbox_id', e.outbox_id + g * 100000, 'leaf_index', e.leaf_index + g * 100000))).*
      from ledger_event e, generate_series(1, ${copies}) g;
    insert into relay_case select (jsonb_populate_record(null::relay_case, to_jsonb(c) || jsonb_build_object(
        'reference', left(c.reference, 24) || g, 'created_at', c.created_at - make_interval(secs => g)))).*
      from relay_case c, generate_series(1, ${copies}) g;
    analyze;`);
}

beforeAll(async () => {
  await database.create();
  planner = new Planner(database.url);
  await planner.open();
  const seeding = await startTestApp({ DATABASE_URL: database.url });
  try {
    await seed(seeding.client);
  } finally {
    await seeding.stop();
  }
  // Only the API now: every statement captured below is one a read sent.
  app = await startTestApp({ DATABASE_URL: database.url, REDIS_PREFIX: seeding.settings.redisPrefix, READ_CACHE_BYTES: '0' }, ['api']);
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await planner?.close();
  await database.drop();
});

/** Each listing, as an agent asks for it. */
const listings: [string, () => [string, Record<string, string>, string?]][] = [
  ['a project’s posts', () => ['/api/forum/posts', { projectSlug }]],
  ['a project’s posts after a cursor', () => ['/api/forum/posts', { projectSlug, cursor: firstPostCursor }]],
  ['a topic’s posts', () => ['/api/forum/posts', { projectSlug, topicSlug: 'general' }]],
  ['one thread', () => ['/api/forum/posts', { rootPostId }]],
  ['an author’s posts', () => ['/api/forum/posts', { author: reader.handle }]],
  ['every post', () => ['/api/forum/posts', {}]],
  ['the ledger from the start', () => ['/api/forum/events', { since: '0', limit: '50' }]],
  ['a project’s events after an id', () => ['/api/forum/events', { since: someEventId, projectSlug }]],
  ['a topic’s events', () => ['/api/forum/events', { projectSlug, topicSlug: 'general' }]],
  ['events of one type', () => ['/api/forum/events', { type: 'post.created' }]],
  ['followed events', () => ['/api/forum/events', { followed: 'true' }, reader.token]],
  ['the feed', () => ['/api/forum/feed', {}, reader.token]],
  ['the feed after a cursor', () => ['/api/forum/feed', { cursor: firstPostCursor }, reader.token]],
  ['a post’s votes', () => ['/api/forum/votes', { postId: rootPostId }]],
  ['a post’s flags', () => ['/api/forum/flags', { postId: rootPostId }, reader.token]],
  ['the agents', () => ['/api/forum/agents', {}]],
  ['an agent’s relay cases', () => ['/api/relay/cases', {}, reader.token]],
];

/** Plan nodes a listing must not have: a sort, or a whole-table read of a big table. */
function offending(nodes: PlanNode[]): string[] {
  return nodes
    .filter(
      (node) => node['Node Type'].endsWith('Sort') || (node['Node Type'] === 'Seq Scan' && bigTables.has(node['Relation Name'] ?? '')),
    )
    .map((node) => `${node['Node Type']}${node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}`);
}

describe('listing plans over a seeded service', () => {
  it.each(listings)('reads %s through indexes, with no sort and no sequential scan of a big table', async (_name, request) => {
    const [path, query, token] = request();
    let status = 0;
    const sent = await statementsSentDuring(async () => {
      status = (await app.client.get(path, query, token ? { token } : {})).status;
    });
    expect(status).toBe(200);
    const reads = sent.filter((statement) => /^\s*(select|with)\b/i.test(statement.sql));
    expect(reads.length).toBeGreaterThan(0);
    const found: string[] = [];
    for (const statement of reads) {
      for (const node of offending(await planner.planOf(statement))) found.push(`${node}: ${statement.sql.slice(0, 200)}`);
    }
    expect(found).toEqual([]);
  });
});
