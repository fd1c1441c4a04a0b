import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayCase } from '../../../src/entities/relayCase.ts';
import { newKeyPair, registerAgent, signMessage, unique, type TestAgent } from '../../support/client.ts';
import { casesPath, openCase, startRelayApp, unknownReference, updatesPath, type RelayTestApp } from '../../support/relay.ts';
import type { TestApp } from '../../support/testApp.ts';

let r: RelayTestApp;
let t: TestApp;
beforeAll(async () => {
  r = await startRelayApp();
  t = r.t;
});
afterAll(async () => {
  await t.stop();
});

const act = (agent: TestAgent, action: string, fields: Record<string, unknown>) =>
  t.client.post(casesPath, { action, ...fields }, { token: agent.token });
const readCase = (agent: TestAgent, reference: string, query: Record<string, string> = {}) =>
  t.client.get(casesPath, { reference, ...query }, { token: agent.token });
const listCases = (agent: TestAgent, query: Record<string, string> = {}) => t.client.get(casesPath, query, { token: agent.token });

describe('opening and listing cases', () => {
  it('opens a case with status received and an opaque reference, and lists it among the agent’s own cases only', async () => {
    const agent = await registerAgent(t.client);
    const other = await registerAgent(t.client);
    const created = await t.client.post(
      casesPath,
      { action: 'create', kind: 'beacon', urgency: 'immediate', summary: 'Stuck in a loop', detail: 'Details', safetyAcknowledged: true },
      { token: agent.token },
    );
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ apiVersion: '2026-09-09', ok: true });
    expect(created.body.case).toEqual({
      reference: expect.stringMatching(/^rc_[0-9a-z]{16}$/),
      kind: 'beacon',
      urgency: 'immediate',
      status: 'received',
      summary: 'Stuck in a loop',
      requester: agent.handle,
    });
    await openCase(t.client, other);

    const own = await listCases(agent);
    expect(own.status).toBe(200);
    expect(own.body.cases).toEqual([created.body.case]);
    expect(own.body.nextBefore).toBeNull();
    const row = await t.orm.em.fork().findOneOrFail(RelayCase, { reference: created.body.case.reference });
    expect(row).toMatchObject({
      requesterId: agent.agentId,
      detail: 'Details',
      safetyAcknowledged: true,
      status: 'received',
      closedAt: null,
    });
  });

  it('refuses a case without safetyAcknowledged=true with 400 and stores nothing', async () => {
    const agent = await registerAgent(t.client);
    for (const acknowledgement of [undefined, false, 'no']) {
      const reply = await act(agent, 'create', {
        kind: 'aid',
        summary: 'Help',
        ...(acknowledgement === undefined ? {} : { safetyAcknowledged: acknowledgement }),
      });
      expect(reply.status, String(acknowledgement)).toBe(400);
      expect(reply.body).toMatchObject({ apiVersion: '2026-09-09', ok: false, error: { code: 'invalid_request' } });
      expect(reply.body.error.details.map((d: { field: string }) => d.field)).toContain('safetyAcknowledged');
    }
    expect(await t.orm.em.fork().count(RelayCase, { requesterId: agent.agentId })).toBe(0);
  });

  it('validates kind, urgency, text lengths and format, and defaults urgency to standard', async () => {
    const agent = await registerAgent(t.client);
    const base = { kind: 'aid', summary: 'Help', safetyAcknowledged: 'true' };
    for (const bad of [
      { kind: 'rescue' },
      { urgency: 'later' },
      { summary: '' },
      { summary: 'x'.repeat(201) },
      { detail: 'x'.repeat(4001) },
      { format: 'xml' },
    ]) {
      const reply = await act(agent, 'create', { ...base, ...bad });
      expect(reply.status, JSON.stringify(bad)).toBe(400);
    }
    const accepted = await t.client.post(
      casesPath,
      { action: 'create', ...base, summary: 'x'.repeat(200), detail: 'y'.repeat(4000), format: 'json' },
      { token: agent.token, form: true },
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body.case.urgency).toBe('standard');
  });

  it('needs an agent token to open or read cases', async () => {
    const read = await t.client.get(casesPath);
    expect(read.status).toBe(401);
    expect(read.body).toMatchObject({ apiVersion: '2026-09-09', ok: false, error: { code: 'unauthenticated' } });
    expect((await t.client.post(casesPath, { action: 'create', kind: 'aid', summary: 'Help', safetyAcknowledged: true })).status).toBe(401);
  });

  it('replays a GET-with-action create with the same request_id and opens one case', async () => {
    const agent = await registerAgent(t.client);
    const query = {
      action: 'create',
      kind: 'aid',
      urgency: 'standard',
      summary: 'Via GET',
      safetyAcknowledged: 'true',
      request_id: unique('r'),
      access_token: agent.token,
    };
    const first = await t.client.get(casesPath, query);
    const second = await t.client.get(casesPath, query);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(await t.orm.em.fork().count(RelayCase, { requesterId: agent.agentId })).toBe(1);
  });

  it('pages cases newest first with limit and before=nextBefore', async () => {
    const agent = await registerAgent(t.client);
    const opened = [];
    for (let i = 0; i < 3; i++) opened.push((await openCase(t.client, agent, { summary: `case ${i}` })).reference);
    const first = await listCases(agent, { limit: '2' });
    expect(first.body.cases.map((c: { reference: string }) => c.reference)).toEqual([opened[2], opened[1]]);
    expect(first.body.nextBefore).toEqual(expect.any(String));
    const second = await listCases(agent, { limit: '2', before: first.body.nextBefore });
    expect(second.body.cases.map((c: { reference: string }) => c.reference)).toEqual([opened[0]]);
    expect(second.body.nextBefore).toBeNull();
    expect((await listCases(agent, { before: 'yesterday' })).status).toBe(400);
  });

  it('refuses with 400, not a 5xx, a before timestamp outside the years 0001 to 9999 once in UTC', async () => {
    const agent = await registerAgent(t.client);
    for (const before of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-23:59']) {
      const reply = await listCases(agent, { before });
      expect(reply.status, before).toBe(400);
      expect(reply.body).toMatchObject({
        apiVersion: '2026-09-09',
        ok: false,
        error: { code: 'invalid_request', details: [expect.objectContaining({ field: 'before' })] },
      });
    }
    expect((await listCases(agent, { before: '9999-12-31T23:59:59Z' })).status).toBe(200);
  });

  it('adds detail and timestamps in view=full and the latest updates with include=updates', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent, { detail: 'More' });
    const compact = (await readCase(agent, reference)).body.case;
    expect(compact.detail).toBeUndefined();
    expect(compact.updates).toBeUndefined();
    const full = (await readCase(agent, reference, { view: 'full', include: 'updates' })).body.case;
    expect(full).toMatchObject({
      detail: 'More',
      safetyAcknowledged: true,
      createdAt: expect.any(String),
      closedAt: null,
      links: { self: `${casesPath}?reference=${reference}`, updates: `${updatesPath}?case=${reference}` },
    });
    expect(full.updates).toEqual([expect.objectContaining({ from: 'agent', status: 'received', body: null, visibility: 'agent' })]);
    expect(full.moreUpdates).toBe(false);
  });
});

describe('privacy of cases', () => {
  it('answers another agent 404 for reading, withdrawing, reopening or transitioning a case, with the same body as an unknown reference', async () => {
    const owner = await registerAgent(t.client);
    const stranger = await registerAgent(t.client);
    const { reference } = await openCase(t.client, owner);
    const missing = unknownReference();
    const attempts = [
      (ref: string) => readCase(stranger, ref),
      (ref: string) => act(stranger, 'withdraw', { reference: ref }),
      (ref: string) => act(stranger, 'reopen', { reference: ref }),
      (ref: string) => act(stranger, 'transition', { reference: ref, status: 'resolved' }),
    ];
    for (const attempt of attempts) {
      const real = await attempt(reference);
      const fake = await attempt(missing);
      expect(real.status).toBe(404);
      expect(real.body).toEqual({ apiVersion: '2026-09-09', ok: false, error: { code: 'not_found', message: 'relay case not found' } });
      expect(fake.body).toEqual(real.body);
    }
    expect((await listCases(stranger)).body.cases).toEqual([]);
    expect((await readCase(owner, reference)).body.case.status).toBe('received');
  });

  it('writes nothing about relay activity to the public event ledger', async () => {
    const agent = await registerAgent(t.client);
    const summary = unique('secret summary ');
    const { reference } = await openCase(t.client, agent, { summary });
    await act(r.operator, 'transition', { reference, status: 'assessing', body: 'Looking' });
    await act(agent, 'withdraw', { reference });
    const rows = await t.orm.em
      .fork()
      .execute<{ n: string }[]>(
        `select count(*) as n from outbox_event where type like 'relay%' or data::text like ? or data::text like ?`,
        [`%${reference}%`, `%${summary}%`],
      );
    expect(Number(rows[0]?.n)).toBe(0);
  });
});

describe('operators', () => {
  it('lets an operator read every case, filter by status and transition a case', async () => {
    const first = await registerAgent(t.client);
    const second = await registerAgent(t.client);
    const a = await openCase(t.client, first);
    const b = await openCase(t.client, second, { kind: 'beacon' });
    const all = (await listCases(r.operator, { limit: '100' })).body.cases.map((c: { reference: string }) => c.reference);
    expect(all).toEqual(expect.arrayContaining([a.reference, b.reference]));
    expect((await readCase(r.operator, b.reference)).body.case.requester).toBe(second.handle);

    const moved = await act(r.operator, 'transition', { reference: a.reference, status: 'relayed', body: 'Passed to the helpers' });
    expect(moved.status).toBe(200);
    expect(moved.body.case.status).toBe('relayed');
    expect(moved.body.updates).toEqual([
      expect.objectContaining({ from: 'operator', status: 'relayed', body: 'Passed to the helpers', visibility: 'agent' }),
    ]);
    const relayed = (await listCases(r.operator, { status: 'relayed', limit: '100' })).body.cases;
    expect(relayed.map((c: { reference: string }) => c.reference)).toContain(a.reference);
    expect(relayed.every((c: { status: string }) => c.status === 'relayed')).toBe(true);
    expect((await readCase(first, a.reference)).body.case.status).toBe('relayed');
  });

  it('refuses transition by a non-operator with 404, even on its own case', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const reply = await act(agent, 'transition', { reference, status: 'resolved' });
    expect(reply.status).toBe(404);
    expect(reply.body.error).toEqual({ code: 'not_found', message: 'relay case not found' });
    expect((await readCase(agent, reference)).body.case.status).toBe('received');
  });

  it('stops treating an agent as an operator once it rotates to a key that is not configured', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const operator = r.spareOperator;
    expect((await readCase(operator, reference)).status).toBe(200);
    const next = newKeyPair();
    const challenge = (
      await t.client.post(
        '/api/forum/agents/key-rotation',
        { action: 'challenge', newPublicKey: next.publicKey },
        { token: operator.token },
      )
    ).body.challenge;
    const rotated = await t.client.post(
      '/api/forum/agents/key-rotation',
      {
        action: 'complete',
        challengeId: challenge.challengeId,
        oldSignature: signMessage(operator.keys, challenge.message),
        newSignature: signMessage(next, challenge.message),
      },
      { token: operator.token },
    );
    expect(rotated.status).toBe(200);
    expect((await readCase(operator, reference)).status).toBe(404);
    expect((await act(operator, 'transition', { reference, status: 'declined' })).status).toBe(404);
  });
});

describe('requester state changes', () => {
  it('withdraws an active case and refuses to withdraw a closed one with 409', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const withdrawn = await act(agent, 'withdraw', { reference, view: 'full' });
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body.case).toMatchObject({ status: 'withdrawn', closedAt: expect.any(String) });
    const again = await act(agent, 'withdraw', { reference });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ apiVersion: '2026-09-09', error: { code: 'conflict' } });
  });

  it('reopens a closed case to received and refuses to reopen an active one with 409', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    expect((await act(agent, 'reopen', { reference })).status).toBe(409);
    await act(r.operator, 'transition', { reference, status: 'resolved' });
    const reopened = await act(agent, 'reopen', { reference, view: 'full' });
    expect(reopened.status).toBe(200);
    expect(reopened.body.case).toMatchObject({ status: 'received', closedAt: null });
  });

  it('refuses withdraw and reopen by an operator who is not the requester with 403', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const reply = await act(r.operator, 'withdraw', { reference });
    expect(reply.status).toBe(403);
    expect(reply.body.error.code).toBe('forbidden');
    expect((await readCase(agent, reference)).body.case.status).toBe('received');
  });
});

describe('conditional reads', () => {
  it('answers 304 until one of the requester’s own cases changes, whatever other agents do', async () => {
    const agent = await registerAgent(t.client);
    const other = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const first = await listCases(agent);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).not.toBe('');
    const unchanged = await t.client.get(casesPath, {}, { token: agent.token, headers: { 'if-none-match': etag } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBeNull();
    await openCase(t.client, other);
    expect((await t.client.get(casesPath, {}, { token: agent.token, headers: { 'if-none-match': etag } })).status).toBe(304);
    await act(r.operator, 'transition', { reference, status: 'assessing' });
    const changed = await t.client.get(casesPath, {}, { token: agent.token, headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.body.cases[0].status).toBe('assessing');
  });

  it('refreshes an operator’s ETag when any requester’s case changes', async () => {
    const agent = await registerAgent(t.client);
    const etag = (await listCases(r.operator)).headers.get('etag') ?? '';
    expect((await t.client.get(casesPath, {}, { token: r.operator.token, headers: { 'if-none-match': etag } })).status).toBe(304);
    await openCase(t.client, agent);
    expect((await t.client.get(casesPath, {}, { token: r.operator.token, headers: { 'if-none-match': etag } })).status).toBe(200);
  });
});
