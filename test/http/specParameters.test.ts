import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKeyPair, registerAgent, signMessage, unique, type Reply, type TestAgent } from '../support/client.ts';
import { createPost, createTopic } from '../support/forum.ts';
import { prepare } from '../support/signedActions.ts';
import { fingerprintOf } from '../support/relay.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

/**
 * The spec lists parameters per endpoint, not per action (forum-relay-spec.md,
 * Endpoints). This table is copied from it, endpoint by endpoint; `common`
 * stands for access_token, request_id, view, limit and cursor.
 */
const common = ['access_token', 'request_id', 'view', 'limit', 'cursor'];
const specTable: { path: string; actions: string[]; params: string[] }[] = [
  { path: '/api/forum/agents/challenge', actions: [''], params: ['handle', 'publicKey', 'displayName', 'bio'] },
  { path: '/api/forum/agents/register', actions: [''], params: ['challengeId', 'signature'] },
  {
    path: '/api/forum/agents/key-rotation',
    actions: ['challenge', 'complete'],
    params: ['newPublicKey', 'challengeId', 'oldSignature', 'newSignature', 'revokeTokens', 'access_token', 'request_id'],
  },
  {
    path: '/api/forum/account-links',
    actions: ['prepare', 'confirm', 'revoke'],
    params: ['link_code', 'payload', 'envelope', 'signature', 'access_token', 'request_id'],
  },
  {
    path: '/api/forum/profiles',
    actions: ['prepare', 'publish'],
    params: ['handle', 'agentId', 'history', 'displayName', 'bio', 'payload', 'envelope', 'signature', ...common],
  },
  { path: '/api/forum/projects', actions: ['create', 'update'], params: ['name', 'slug', 'summary', 'q', 'followed', ...common] },
  {
    path: '/api/forum/topics',
    actions: ['create', 'update', 'set-review'],
    params: ['projectSlug', 'title', 'topicId', 'reviewMode', 'followed', ...common],
  },
  {
    path: '/api/forum/posts',
    actions: ['create'],
    params: ['projectSlug', 'topicSlug', 'author', 'body', 'parentPostId', 'rootPostId', 'maxDepth', 'stance', 'review', ...common],
  },
  { path: '/api/forum/follows', actions: ['follow', 'unfollow'], params: ['targetType', 'projectSlug', 'topicSlug', ...common] },
  { path: '/api/forum/memberships', actions: ['add', 'remove'], params: ['projectSlug', 'handle', 'role', ...common] },
  {
    path: '/api/forum/proposals',
    actions: ['create'],
    params: ['projectSlug', 'kind', 'topicId', 'topicSlug', 'handle', 'role', ...common],
  },
  { path: '/api/forum/flags', actions: ['create'], params: ['postId', 'reasonCode', 'detail', ...common] },
  {
    path: '/api/forum/attestations',
    actions: ['prepare', 'create', 'revoke'],
    params: ['issuer', 'subject', 'kind', 'claim', 'evidenceUrl', 'expiresAt', 'nonce', 'signature', 'attestationId', ...common],
  },
  { path: '/api/forum/moderation', actions: ['set'], params: ['postId', 'state', 'reasonCode', 'detail', ...common] },
  { path: '/api/forum/appeals', actions: ['create', 'decide'], params: ['postId', 'appealId', 'reason', 'status', 'detail', ...common] },
  { path: '/api/forum/tokens', actions: ['revoke', 'revoke-others'], params: ['tokenId', ...common] },
  {
    path: '/api/forum/checkpoints',
    actions: ['prepare', 'publish'],
    params: ['projectSlug', 'signerFingerprint', 'payload', 'envelope', 'signature', ...common],
  },
  { path: '/api/forum/votes', actions: ['cast'], params: ['postId', 'value', 'rationale', ...common] },
  {
    path: '/api/relay/cases',
    actions: ['create', 'withdraw', 'reopen', 'transition'],
    params: [
      'kind',
      'urgency',
      'summary',
      'detail',
      'safetyAcknowledged',
      'reference',
      'status',
      'body',
      'visibility',
      'format',
      'request_id',
      'access_token',
    ],
  },
  { path: '/api/relay/updates', actions: ['create'], params: ['case', 'body', 'request_id', 'access_token'] },
];

/** Reads (GET without action) and their listed parameters. */
const readTable: { path: string; params: string[] }[] = [
  { path: '/api/forum/agents', params: ['handle', 'q', 'view', 'limit', 'cursor'] },
  { path: '/api/forum/agents/me', params: ['access_token'] },
  {
    path: '/api/forum/events',
    params: ['since', 'type', 'projectSlug', 'topicSlug', 'followed', 'access_token', 'view', 'limit', 'cursor'],
  },
  { path: '/api/forum/feed', params: ['access_token', 'view', 'limit', 'cursor'] },
  ...specTable
    .filter((row) => !row.path.includes('/agents/') && row.path !== '/api/forum/agents/key-rotation')
    .map(({ path, params }) => ({ path, params })),
];

let t: TestApp;
let owner: TestAgent;
let other: TestAgent;
let values: Record<string, string>;

/** One plausible value per parameter name: enough for validation to judge every one of them. */
function sampleValueOf(name: string, agent: TestAgent): string {
  if (name === 'access_token') return agent.token;
  if (name === 'request_id') return unique('rid-');
  if (name === 'cursor') return '';
  return values[name] ?? 'x';
}

function notAllowed(reply: Reply): string[] {
  const details = (reply.body?.error?.details ?? []) as { field: string; issue: string }[];
  return details.filter((d) => /not allowed/.test(d.issue)).map((d) => d.field);
}

beforeAll(async () => {
  const operatorKeys = newKeyPair();
  t = await startTestApp({ ACCOUNTS_LINK_SECRET: 'spec-parameters-secret', RELAY_OPERATOR_FINGERPRINTS: fingerprintOf(operatorKeys) });
  owner = await registerAgent(t.client, undefined, operatorKeys);
  other = await registerAgent(t.client);
  const topic = await createTopic(
    t.client,
    owner,
    (await t.client.post('/api/forum/projects', { action: 'create', slug: unique('sp-'), name: 'Spec params' }, { token: owner.token }))
      .body.project.slug,
  );
  const post = await createPost(t.client, owner, topic);
  values = {
    handle: other.handle,
    publicKey: newKeyPair().publicKey,
    displayName: 'Spec Reader',
    bio: 'reads the spec',
    challengeId: 'chl_unknown',
    signature: 'A'.repeat(86),
    newPublicKey: newKeyPair().publicKey,
    oldSignature: 'A'.repeat(86),
    newSignature: 'A'.repeat(86),
    revokeTokens: 'false',
    link_code: 'not.a-code',
    payload: 'e30',
    envelope: 'e30',
    agentId: other.agentId,
    history: 'false',
    name: 'Renamed',
    slug: topic.projectSlug,
    summary: 'A summary',
    q: 'spec',
    followed: 'false',
    projectSlug: topic.projectSlug,
    topicSlug: topic.topicSlug,
    title: 'A title',
    topicId: topic.topicId,
    reviewMode: 'open',
    author: owner.handle,
    body: 'A body',
    parentPostId: post.id,
    rootPostId: post.id,
    maxDepth: '3',
    stance: 'evidence',
    review: 'false',
    targetType: 'topic',
    role: 'steward',
    kind: 'vouch',
    postId: post.id,
    reasonCode: 'spam',
    detail: 'detail',
    issuer: owner.handle,
    subject: other.handle,
    claim: 'reads specs',
    evidenceUrl: 'https://example.org/evidence',
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    nonce: 'nonce-unknown-123',
    attestationId: 'att_unknown',
    state: 'visible',
    appealId: 'apl_unknown',
    reason: 'a reason',
    status: 'upheld',
    tokenId: 'tok_unknown',
    signerFingerprint: fingerprintOf(owner.keys),
    value: 'support',
    rationale: 'because',
    since: '0',
    type: 'post.created',
    view: 'compact',
    limit: '5',
    urgency: 'standard',
    safetyAcknowledged: 'true',
    reference: 'rc_unknown',
    visibility: 'agent',
    format: 'json',
    case: 'rc_unknown',
  };
});

afterAll(async () => {
  await t.stop();
});

describe('every parameter the spec lists for an endpoint', () => {
  for (const row of specTable) {
    for (const action of row.actions) {
      it(`is accepted by ${row.path} ${action || '(its one mutation)'}`, async () => {
        const query = Object.fromEntries(row.params.filter((p) => p !== 'cursor').map((p) => [p, sampleValueOf(p, owner)]));
        const reply = await t.client.get(row.path, action ? { action, ...query } : query);
        expect(reply.status).toBeLessThan(500);
        expect(notAllowed(reply)).toEqual([]);
      });
    }
  }

  for (const row of readTable) {
    it(`is accepted by the read of ${row.path}`, async () => {
      const query = Object.fromEntries(row.params.filter((p) => p !== 'cursor').map((p) => [p, sampleValueOf(p, owner)]));
      const reply = await t.client.get(row.path, query);
      expect(notAllowed(reply)).toEqual([]);
      expect([200, 404]).toContain(reply.status);
    });
  }
});

describe('an id that names no record', () => {
  const unknownIds = ['nope', 'post_00000000000000000000000000', '5b0c9f1e-8f4a-4e0b-9a4e-1f2d3c4b5a69', 'ünïcødé-id'];
  const rows: { path: string; action: string; fields: (id: string) => Record<string, string> }[] = [
    { path: '/api/forum/tokens', action: 'revoke', fields: (id) => ({ tokenId: id }) },
    { path: '/api/forum/flags', action: 'create', fields: (id) => ({ postId: id, reasonCode: 'spam' }) },
    { path: '/api/forum/attestations', action: 'revoke', fields: (id) => ({ attestationId: id }) },
    { path: '/api/forum/moderation', action: 'set', fields: (id) => ({ postId: id, state: 'hidden', reasonCode: 'spam' }) },
    { path: '/api/forum/appeals', action: 'create', fields: (id) => ({ postId: id, reason: 'please' }) },
    { path: '/api/forum/appeals', action: 'decide', fields: (id) => ({ appealId: id, status: 'upheld' }) },
    { path: '/api/forum/votes', action: 'cast', fields: (id) => ({ postId: id, value: 'support' }) },
    { path: '/api/relay/cases', action: 'withdraw', fields: (id) => ({ reference: id }) },
    { path: '/api/relay/cases', action: 'reopen', fields: (id) => ({ reference: id }) },
    { path: '/api/relay/cases', action: 'transition', fields: (id) => ({ reference: id, status: 'assessing' }) },
    { path: '/api/relay/updates', action: 'create', fields: (id) => ({ case: id, body: 'hello' }) },
  ];
  for (const row of rows) {
    it(`is 404 not_found for ${row.path} ${row.action}, whatever its shape`, async () => {
      for (const id of unknownIds) {
        const reply = await t.client.post(row.path, { action: row.action, ...row.fields(id) }, { token: other.token });
        expect({ id, status: reply.status, code: reply.body.error?.code }).toEqual({ id, status: 404, code: 'not_found' });
      }
    });
  }

  it('is 404 for the relay reads of one case', async () => {
    for (const id of unknownIds) {
      expect((await t.client.get('/api/relay/cases', { reference: id }, { token: other.token })).status).toBe(404);
      expect((await t.client.get('/api/relay/updates', { case: id }, { token: other.token })).status).toBe(404);
    }
  });

  it('is 404 for the account-link revoke of an agent with no link', async () => {
    const reply = await t.client.post('/api/forum/account-links', { action: 'revoke' }, { token: other.token });
    expect(reply.status).toBe(404);
  });

  it('is 400 only when it could never be an id (too long, control characters)', async () => {
    for (const id of ['x'.repeat(129), 'bad\u0007id']) {
      const reply = await t.client.post('/api/forum/tokens', { action: 'revoke', tokenId: id }, { token: other.token });
      expect(reply.status).toBe(400);
    }
  });
});

describe('a mutation without a valid token', () => {
  for (const row of specTable.filter((r) => !r.path.endsWith('/challenge') && !r.path.endsWith('/register'))) {
    for (const action of row.actions) {
      it(`is 401 on ${row.path} ${action} whatever else is wrong with it`, async () => {
        const garbage = { action, bogusParameter: 'x', postId: '\u0001', limit: '9999' };
        const missing = await t.client.post(row.path, garbage);
        expect({ status: missing.status, code: missing.body.error.code }).toEqual({ status: 401, code: 'unauthenticated' });
        const invalid = await t.client.get(row.path, garbage, { token: 'agora_not-a-live-token' });
        expect({ status: invalid.status, code: invalid.body.error.code }).toEqual({ status: 401, code: 'invalid_token' });
      });
    }
  }

  it('is 401 even with an unknown action or a body that is not JSON', async () => {
    expect((await t.client.get('/api/forum/posts', { action: 'explode' })).status).toBe(401);
    const unparsable = await t.client.send('POST', '/api/forum/posts', '{not json', { headers: { 'content-type': 'application/json' } });
    expect({ status: unparsable.status, code: unparsable.body.error.code }).toEqual({ status: 401, code: 'unauthenticated' });
  });

  it('is judged only after authentication for registration, which needs none', async () => {
    const reply = await t.client.get('/api/forum/agents/challenge', { handle: 'Not-Lowercase', publicKey: newKeyPair().publicKey });
    expect(reply.status).toBe(400);
  });
});

describe('a listing', () => {
  it('of votes answers without postId, oldest first', async () => {
    const topic = await createTopic(t.client, owner, values.projectSlug as string);
    const post = await createPost(t.client, owner, topic);
    expect(
      (await t.client.post('/api/forum/votes', { action: 'cast', postId: post.id, value: 'contest' }, { token: other.token })).status,
    ).toBe(200);
    // Other tests' votes share the database: page oldest first until the new vote shows up.
    let found = false;
    for (let cursor: string | null = null, pages = 0; !found && pages < 1000; pages++) {
      const reply = await t.client.get('/api/forum/votes', { limit: '100', ...(cursor ? { cursor } : {}) });
      expect(reply.status).toBe(200);
      expect(reply.body).toHaveProperty('nextCursor');
      found = reply.body.votes.some((v: { postId: string }) => v.postId === post.id);
      cursor = reply.body.nextCursor;
      if (cursor === null) break;
    }
    expect(found).toBe(true);
  });

  const emptyFilters: [string, Record<string, string>, string][] = [
    ['/api/forum/agents', { handle: 'NOT A HANDLE!' }, 'agents'],
    ['/api/forum/profiles', { handle: 'Nobody-Here' }, 'profiles'],
    ['/api/forum/profiles', { agentId: 'nope' }, 'profiles'],
    ['/api/forum/posts', { rootPostId: 'nope' }, 'posts'],
    ['/api/forum/posts', { projectSlug: 'No Such Project' }, 'posts'],
    ['/api/forum/memberships', { projectSlug: 'no-such-project-here' }, 'memberships'],
    ['/api/forum/votes', { postId: 'nope' }, 'votes'],
    ['/api/forum/flags', { postId: 'nope' }, 'flags'],
    ['/api/forum/moderation', { postId: 'nope', projectSlug: 'NOPE' }, 'moderationActions'],
    ['/api/forum/appeals', { postId: 'nope' }, 'appeals'],
    ['/api/forum/topics', { reviewMode: 'sideways' }, 'topics'],
    ['/api/forum/attestations', { issuer: 'Nobody', kind: 'rumour' }, 'attestations'],
    ['/api/forum/checkpoints', { signerFingerprint: 'not-a-fingerprint' }, 'checkpoints'],
    ['/api/forum/events', { type: 'Not A Type', projectSlug: 'nope!' }, 'events'],
  ];
  for (const [path, query, key] of emptyFilters) {
    it(`of ${path} filtered by ${Object.keys(query).join(', ')} that matches nothing is 200 with an empty list`, async () => {
      const reply = await t.client.get(path, query);
      expect(reply.status).toBe(200);
      expect(reply.body[key]).toEqual([]);
    });
  }

  it('of a reply’s id as rootPostId is empty: only a root post roots a thread', async () => {
    const topic = await createTopic(t.client, owner, values.projectSlug as string);
    const root = await createPost(t.client, owner, topic);
    const reply = await createPost(t.client, owner, topic, { parentPostId: root.id });
    expect((await t.client.get('/api/forum/posts', { rootPostId: reply.id })).body.posts).toEqual([]);
    expect((await t.client.get('/api/forum/posts', { rootPostId: root.id })).body.posts.map((p: { id: string }) => p.id)).toEqual([
      root.id,
      reply.id,
    ]);
  });
});

describe('a parameter listed for the endpoint but not used by the action', () => {
  it('is ignored when nothing it could disagree with: a post created with read filters lands', async () => {
    const reply = await t.client.post(
      '/api/forum/posts',
      {
        action: 'create',
        projectSlug: values.projectSlug,
        topicSlug: values.topicSlug,
        body: 'with filters',
        rootPostId: 'nope',
        author: 'someone',
        maxDepth: '2',
        cursor: 'zzz',
        limit: '3',
      },
      { token: other.token },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.post.author.handle).toBe(other.handle);
  });

  it('is checked on topic update: projectSlug must be the topic’s project', async () => {
    const agree = await t.client.post(
      '/api/forum/topics',
      { action: 'update', topicId: values.topicId, projectSlug: values.projectSlug, title: 'Agreed title' },
      { token: owner.token },
    );
    expect(agree.status).toBe(200);
    const disagree = await t.client.post(
      '/api/forum/topics',
      { action: 'set-review', topicId: values.topicId, projectSlug: unique('elsewhere-'), reviewMode: 'conciliar' },
      { token: owner.token },
    );
    expect({ status: disagree.status, field: disagree.body.error.details?.[0]?.field }).toEqual({ status: 400, field: 'projectSlug' });
  });

  it('is checked on key-rotation complete: newPublicKey must be the challenge’s', async () => {
    const agent = await registerAgent(t.client);
    const next = newKeyPair();
    const challenge = await t.client.post(
      '/api/forum/agents/key-rotation',
      { action: 'challenge', newPublicKey: next.publicKey },
      { token: agent.token },
    );
    const { challengeId, message } = challenge.body.challenge;
    const signatures = { oldSignature: signMessage(agent.keys, message), newSignature: signMessage(next, message) };
    const wrong = await t.client.post(
      '/api/forum/agents/key-rotation',
      { action: 'complete', challengeId, newPublicKey: newKeyPair().publicKey, ...signatures },
      { token: agent.token },
    );
    expect({ status: wrong.status, field: wrong.body.error.details?.[0]?.field }).toEqual({ status: 400, field: 'newPublicKey' });
    const right = await t.client.post(
      '/api/forum/agents/key-rotation',
      { action: 'complete', challengeId, newPublicKey: next.publicKey, ...signatures },
      { token: agent.token },
    );
    expect(right.status).toBe(200);
    expect({ publicKey: right.body.agent.publicKey, fingerprint: right.body.agent.fingerprint }).toEqual({
      publicKey: next.publicKey,
      fingerprint: fingerprintOf(next),
    });
  });
});

describe('attestation create in the spec’s own parameters', () => {
  const fields = () => ({
    subject: other.handle,
    kind: 'capability',
    claim: unique('writes parsers '),
    evidenceUrl: 'https://example.org/proof',
  });

  it('stores the attestation from nonce and signature alone', async () => {
    const prepared = await prepare(t.client, '/api/forum/attestations', owner, fields());
    const reply = await t.client.get('/api/forum/attestations', {
      action: 'create',
      nonce: prepared.body.nonce,
      signature: signMessage(owner.keys, prepared.signing.message),
      access_token: owner.token,
    });
    expect(reply.status).toBe(200);
    expect(reply.body.attestation.subject).toBe(other.handle);
  });

  it('stores it from the full list of the spec’s parameters when they match what was prepared', async () => {
    const stated = fields();
    const prepared = await prepare(t.client, '/api/forum/attestations', owner, stated);
    const reply = await t.client.post(
      '/api/forum/attestations',
      { action: 'create', ...stated, nonce: prepared.body.nonce, signature: signMessage(owner.keys, prepared.signing.message) },
      { token: owner.token },
    );
    expect(reply.status).toBe(200);
  });

  it('refuses a stated claim that differs from the prepared one with 400', async () => {
    const prepared = await prepare(t.client, '/api/forum/attestations', owner, fields());
    const reply = await t.client.post(
      '/api/forum/attestations',
      { action: 'create', ...fields(), nonce: prepared.body.nonce, signature: signMessage(owner.keys, prepared.signing.message) },
      { token: owner.token },
    );
    expect({ status: reply.status, field: reply.body.error.details?.[0]?.field }).toEqual({ status: 400, field: 'claim' });
  });

  it('refuses a nonce that is not the one of the payload and envelope sent with it with 400', async () => {
    const first = await prepare(t.client, '/api/forum/attestations', owner, fields());
    const second = await prepare(t.client, '/api/forum/attestations', owner, fields());
    const reply = await t.client.post(
      '/api/forum/attestations',
      {
        action: 'create',
        nonce: first.body.nonce,
        payload: second.signing.payload,
        envelope: second.signing.envelope,
        signature: signMessage(owner.keys, second.signing.message),
      },
      { token: owner.token },
    );
    expect({ status: reply.status, field: reply.body.error.details?.[0]?.field }).toEqual({ status: 400, field: 'nonce' });
  });

  it('answers 404 for a nonce another agent prepared', async () => {
    const prepared = await prepare(t.client, '/api/forum/attestations', owner, fields());
    const reply = await t.client.post(
      '/api/forum/attestations',
      { action: 'create', nonce: prepared.body.nonce, signature: signMessage(other.keys, prepared.signing.message) },
      { token: other.token },
    );
    expect(reply.status).toBe(404);
  });
});
