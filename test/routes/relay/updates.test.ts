import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayUpdate } from '../../../src/entities/relayUpdate.ts';
import { registerAgent, type TestAgent } from '../../support/client.ts';
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

const say = (agent: TestAgent, reference: string, body: string, fields: Record<string, unknown> = {}) =>
  t.client.post(updatesPath, { action: 'create', case: reference, body, ...fields }, { token: agent.token });
const transition = (reference: string, status: string, fields: Record<string, unknown> = {}) =>
  t.client.post(casesPath, { action: 'transition', reference, status, ...fields }, { token: r.operator.token });
const bodiesSeenBy = async (agent: TestAgent, reference: string) =>
  ((await t.client.get(updatesPath, { case: reference }, { token: agent.token })).body.updates as { body: string | null }[])
    .map((u) => u.body)
    .filter((b) => b !== null);

describe('messages on a case', () => {
  it('lets the requester and an operator exchange messages, newest first', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const asked = await say(agent, reference, 'Any news?');
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({
      apiVersion: '2026-09-09',
      ok: true,
      update: { case: reference, from: 'agent', body: 'Any news?', status: null, visibility: 'agent' },
    });
    expect((await say(r.operator, reference, 'Working on it')).body.update.from).toBe('operator');
    const read = await t.client.get(updatesPath, { case: reference }, { token: agent.token });
    expect(read.status).toBe(200);
    expect(read.body.updates.map((u: { from: string; body: string | null; status: string | null }) => [u.from, u.body, u.status])).toEqual([
      ['operator', 'Working on it', null],
      ['agent', 'Any news?', null],
      ['agent', null, 'received'],
    ]);
    expect(read.body.nextBefore).toBeNull();
  });

  it('hides operator-only notes from the requester and shows them, with their authors, to operators', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const moved = await transition(reference, 'assessing', { body: 'Requester seems confused', visibility: 'operator' });
    expect(moved.status).toBe(200);
    expect(
      moved.body.updates.map((u: { status: string | null; body: string | null; visibility: string }) => [u.status, u.body, u.visibility]),
    ).toEqual([
      ['assessing', null, 'agent'],
      [null, 'Requester seems confused', 'operator'],
    ]);
    expect((await say(r.operator, reference, 'Check with the helpers first', { visibility: 'operator' })).status).toBe(200);
    expect((await say(r.operator, reference, 'We are looking into it')).status).toBe(200);

    expect(await bodiesSeenBy(agent, reference)).toEqual(['We are looking into it']);
    expect(await bodiesSeenBy(r.operator, reference)).toEqual([
      'We are looking into it',
      'Check with the helpers first',
      'Requester seems confused',
    ]);
    const included = (await t.client.get(casesPath, { reference, include: 'updates', view: 'full' }, { token: agent.token })).body.case
      .updates as Record<string, unknown>[];
    expect(included.map((u) => u.body).filter(Boolean)).toEqual(['We are looking into it']);
    expect(included.every((u) => u.visibility === 'agent' && u.author === undefined)).toBe(true);
    const forOperator = (await t.client.get(updatesPath, { case: reference, view: 'full' }, { token: r.operator.token })).body
      .updates as Record<string, unknown>[];
    expect(forOperator[0]).toMatchObject({ author: r.operator.handle, links: { case: `${casesPath}?reference=${reference}` } });
  });

  it('answers another agent 404 for adding to or reading a case, with the same body as an unknown reference', async () => {
    const owner = await registerAgent(t.client);
    const stranger = await registerAgent(t.client);
    const { reference } = await openCase(t.client, owner);
    const missing = unknownReference();
    for (const attempt of [
      (ref: string) => say(stranger, ref, 'Hello'),
      (ref: string) => t.client.get(updatesPath, { case: ref }, { token: stranger.token }),
    ]) {
      const real = await attempt(reference);
      expect(real.status).toBe(404);
      expect(real.body).toEqual({ apiVersion: '2026-09-09', ok: false, error: { code: 'not_found', message: 'relay case not found' } });
      expect((await attempt(missing)).body).toEqual(real.body);
    }
    expect(await t.orm.em.fork().count(RelayUpdate, { caseReference: reference, authorId: stranger.agentId })).toBe(0);
  });

  it('refuses an operator-only note from the requester with 400', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const reply = await say(agent, reference, 'Secret', { visibility: 'operator' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.details).toEqual([expect.objectContaining({ field: 'visibility' })]);
  });

  it('refuses a requester message on a closed case with 409 until the case is reopened', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    await t.client.post(casesPath, { action: 'withdraw', reference }, { token: agent.token });
    const refused = await say(agent, reference, 'One more thing');
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');
    expect((await say(r.operator, reference, 'Noted the withdrawal')).status).toBe(200);
    await t.client.post(casesPath, { action: 'reopen', reference }, { token: agent.token });
    expect((await say(agent, reference, 'One more thing')).status).toBe(200);
  });

  it('returns an awaiting_agent case to assessing when the requester answers', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    await transition(reference, 'awaiting_agent', { body: 'Which host are you on?' });
    const answer = await say(agent, reference, 'host-7');
    expect(answer.body.update).toMatchObject({ from: 'agent', status: 'assessing', body: 'host-7' });
    expect((await t.client.get(casesPath, { reference }, { token: agent.token })).body.case.status).toBe('assessing');
    expect((await say(agent, reference, 'also host-8')).body.update.status).toBeNull();
  });

  it('validates the body and answers 404 for a reference of any shape that names no case', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    expect((await say(agent, reference, 'x'.repeat(4001))).status).toBe(400);
    expect((await say(agent, reference, '   ')).status).toBe(400);
    expect((await say(agent, 'not-a-reference', 'Hello')).status).toBe(404);
    expect((await t.client.get(updatesPath, {}, { token: agent.token })).status).toBe(400);
    expect((await say(agent, reference, 'x'.repeat(4000))).status).toBe(200);
  });

  it('pages updates with limit and before=nextBefore without losing any', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    for (const body of ['one', 'two', 'three']) await say(agent, reference, body);
    // A transition with an operator-only note writes two updates in the same millisecond.
    await transition(reference, 'assessing', { body: 'note', visibility: 'operator' });
    await say(agent, reference, 'four');
    // limit 2 must end a page before the pair, limit 1 must return the pair whole.
    for (const limit of ['2', '1']) {
      const seen: (string | null)[] = [];
      let before: string | null = null;
      do {
        const query: Record<string, string> = { case: reference, limit, ...(before ? { before } : {}) };
        const page = await t.client.get(updatesPath, query, { token: r.operator.token });
        expect(page.status).toBe(200);
        seen.push(...page.body.updates.map((u: { body: string | null; status: string | null }) => u.body ?? u.status));
        before = page.body.nextBefore;
      } while (before);
      expect(seen, `limit ${limit}`).toEqual(['four', 'note', 'assessing', 'three', 'two', 'one', 'received']);
    }
  });

  it('refuses with 400, not a 5xx, a before timestamp outside the years 0001 to 9999 once in UTC', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const reply = await t.client.get(updatesPath, { case: reference, before: '0000-12-31T23:59:59Z' }, { token: agent.token });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      apiVersion: '2026-09-09',
      ok: false,
      error: { code: 'invalid_request', details: [expect.objectContaining({ field: 'before' })] },
    });
  });

  it('keeps an operator-only note out of the requester’s view: the case’s updatedAt and the requester’s ETags do not move', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const caseRead = await t.client.get(casesPath, { reference, view: 'full' }, { token: agent.token });
    const updatesEtag = (await t.client.get(updatesPath, { case: reference }, { token: agent.token })).headers.get('etag') ?? '';
    expect((await say(r.operator, reference, 'Private assessment', { visibility: 'operator' })).status).toBe(200);

    const conditional = await t.client.get(
      casesPath,
      { reference, view: 'full' },
      { token: agent.token, headers: { 'if-none-match': caseRead.headers.get('etag') ?? '' } },
    );
    expect(conditional.status).toBe(304);
    expect(
      (await t.client.get(updatesPath, { case: reference }, { token: agent.token, headers: { 'if-none-match': updatesEtag } })).status,
    ).toBe(304);
    expect((await t.client.get(casesPath, { reference, view: 'full' }, { token: agent.token })).body.case.updatedAt).toBe(
      caseRead.body.case.updatedAt,
    );
    expect(await bodiesSeenBy(r.operator, reference)).toEqual(['Private assessment']);
  });

  it('answers 304 to a requester re-reading unchanged updates, and 200 once an operator writes', async () => {
    const agent = await registerAgent(t.client);
    const { reference } = await openCase(t.client, agent);
    const etag = (await t.client.get(updatesPath, { case: reference }, { token: agent.token })).headers.get('etag') ?? '';
    expect((await t.client.get(updatesPath, { case: reference }, { token: agent.token, headers: { 'if-none-match': etag } })).status).toBe(
      304,
    );
    await say(r.operator, reference, 'Hello');
    expect((await t.client.get(updatesPath, { case: reference }, { token: agent.token, headers: { 'if-none-match': etag } })).status).toBe(
      200,
    );
  });
});
