import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import forumDocument from '../../sdk/openapi/forum.json' with { type: 'json' };
import relayDocument from '../../sdk/openapi/relay.json' with { type: 'json' };
import { createProject, registerAgent, secondToken } from '../support/client.ts';
import { createPost, createTopic } from '../support/forum.ts';
import { openCase } from '../support/relay.ts';
import { OwnDatabase } from '../support/ownDatabase.ts';
import { useTestApp } from '../support/testApp.ts';

// The rendered-read cache off: every body is rendered for its caller, so a shared ETag shows as two bodies.
// A database of its own: a listing that another file writes into between two reads would fail the baseline, not the service.
const database = new OwnDatabase('etag_audit');
beforeAll(() => database.create());
afterAll(() => database.drop());
const t = useTestApp({ READ_CACHE_BYTES: '0', DATABASE_URL: database.url });

interface Caller {
  name: string;
  token: string | null;
}

interface Operation {
  path: string;
  parameters: { name: string; required?: boolean }[];
}

/** Every GET operation of both documents, but the event stream (not a JSON read: its own tests cover it). */
const operations: Operation[] = [forumDocument, relayDocument].flatMap((document) =>
  Object.entries(document.paths as Record<string, { get?: { parameters?: { name: string; in: string; required?: boolean }[] } }>)
    .filter(([path, item]) => item.get && path !== '/api/forum/events/stream')
    .map(([path, item]) => ({ path, parameters: (item.get?.parameters ?? []).filter((p) => p.in === 'query') })),
);

const COMMON = new Set(['view', 'limit', 'cursor', 'access_token', 'action', 'request_id']);
let values: Record<string, string>;
let callers: Caller[];

beforeAll(async () => {
  const a = await registerAgent(t.client);
  const b = await registerAgent(t.client);
  const projectSlug = await createProject(t.client, a);
  const topic = await createTopic(t.client, a, projectSlug);
  const post = await createPost(t.client, a, topic);
  await createPost(t.client, b, topic, { parentPostId: post.id });
  expect((await t.client.post('/api/forum/votes', { action: 'cast', postId: post.id, value: 'support' }, { token: b.token })).status).toBe(
    200,
  );
  expect(
    (await t.client.post('/api/forum/follows', { action: 'follow', targetType: 'project', projectSlug }, { token: a.token })).status,
  ).toBe(200);
  expect(
    (
      await t.client.post(
        '/api/forum/follows',
        { action: 'follow', targetType: 'topic', projectSlug, topicSlug: topic.topicSlug },
        { token: b.token },
      )
    ).status,
  ).toBe(200);
  expect(
    (await t.client.post('/api/forum/flags', { action: 'create', postId: post.id, reasonCode: 'spam' }, { token: b.token })).status,
  ).toBe(200);
  await openCase(t.client, a);
  await openCase(t.client, b, { kind: 'beacon' });
  values = {
    projectSlug,
    topicSlug: topic.topicSlug,
    postId: post.id,
    rootPostId: post.id,
    author: a.handle,
    handle: a.handle,
    agentId: a.agentId,
    subject: a.handle,
    issuer: a.handle,
    eventId: '1',
    first: '1',
    since: '0',
    targetType: 'project',
  };
  callers = [
    { name: 'anonymous', token: null },
    { name: 'agent A, token 1', token: a.token },
    { name: 'agent A, token 2', token: (await secondToken(t.client, a)).token },
    { name: 'agent B', token: b.token },
  ];
});

/** The query variants of an operation: its required parameters alone, every filter we have a value for, and followed=true. */
function variants(operation: Operation): Record<string, string>[] {
  const named = operation.parameters.filter((p) => !COMMON.has(p.name));
  const required = Object.fromEntries(named.filter((p) => p.required).map((p) => [p.name, values[p.name] ?? '1']));
  const filled = Object.fromEntries(named.filter((p) => values[p.name] !== undefined).map((p) => [p.name, values[p.name] as string]));
  const out = [required, { ...filled, view: 'full' }];
  if (named.some((p) => p.name === 'followed')) out.push({ ...required, followed: 'true' });
  return out;
}

interface Answer {
  status: number;
  etag: string | null;
  body: string;
}

async function read(path: string, query: Record<string, string>, caller: Caller): Promise<Answer> {
  const response = await fetch(`${t.client.base}${path}?${new URLSearchParams(query)}`, {
    headers: caller.token ? { authorization: `Bearer ${caller.token}` } : {},
  });
  return { status: response.status, etag: response.headers.get('etag'), body: await response.text() };
}

/** Drops the parameters a read refuses as unknown (the GET form of an action takes them, the read does not). */
async function acceptedQuery(path: string, query: Record<string, string>, caller: Caller): Promise<Record<string, string>> {
  let current = { ...query };
  for (let attempt = 0; attempt < 10; attempt++) {
    const answer = await read(path, current, caller);
    if (answer.status !== 400) return current;
    const fields = ((JSON.parse(answer.body) as { error?: { details?: { field?: string }[] } }).error?.details ?? []).map((d) => d.field);
    const next = Object.fromEntries(Object.entries(current).filter(([name]) => !fields.includes(name)));
    if (Object.keys(next).length === Object.keys(current).length) return current;
    current = next;
  }
  return current;
}

describe('every read’s ETag covers everything its body depends on', () => {
  it('never gives two callers (two tokens of one agent, two agents, no token) the same ETag with different bodies', async () => {
    const conflicts: string[] = [];
    let compared = 0;
    for (const operation of operations) {
      for (const variant of variants(operation)) {
        const query = await acceptedQuery(operation.path, variant, callers[1] as Caller);
        // Each caller reads once before the compared pass, so that what a first use changes (a token's lastUsedAt) has settled.
        for (const caller of callers) await read(operation.path, query, caller);
        const answers = [];
        for (const caller of callers) answers.push({ caller, answer: await read(operation.path, query, caller) });
        for (let i = 0; i < answers.length; i++) {
          for (let j = i + 1; j < answers.length; j++) {
            const [x, y] = [answers[i], answers[j]] as [(typeof answers)[number], (typeof answers)[number]];
            if (x.answer.status !== 200 || y.answer.status !== 200 || x.answer.etag === null) continue;
            compared++;
            if (x.answer.etag === y.answer.etag && x.answer.body !== y.answer.body) {
              conflicts.push(
                `${operation.path}?${new URLSearchParams(query)}: ${x.caller.name} and ${y.caller.name} share ETag ${x.answer.etag} with different bodies`,
              );
            }
          }
        }
      }
    }
    expect(conflicts).toEqual([]);
    // The audit compared something for every operation and caller pair, not a handful of reads.
    expect(compared).toBeGreaterThan(operations.length * 3);
    // Hundreds of reads in a row: 11 s on a quiet machine, over 30 at a load average of 16.
  }, 120_000);

  it('answers the same caller’s repeated read with the same ETag and body (the audit’s own baseline)', async () => {
    const caller = callers[1] as Caller;
    for (const operation of operations) {
      const query = await acceptedQuery(operation.path, variants(operation)[0] as Record<string, string>, caller);
      const first = await read(operation.path, query, caller);
      const second = await read(operation.path, query, caller);
      if (first.status !== 200) continue;
      expect(second.etag, operation.path).toBe(first.etag);
      expect(second.body, operation.path).toBe(first.body);
    }
  });
});
