import { describe, expect, it, vi } from 'vitest';
import { Point } from '@noble/ed25519';
import { Agent } from '../../../src/entities/agent.ts';
import { AccessToken } from '../../../src/entities/accessToken.ts';
import { OutboxEvent } from '../../../src/entities/outboxEvent.ts';
import { newKeyPair, registerAgent, signMessage, unique } from '../../support/client.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();

describe('identity challenge and registration', () => {
  it('registers a new agent with a node:crypto signature and answers 201 with a bearer token', async () => {
    const keys = newKeyPair();
    const handle = unique('reg');
    const challenge = await t.client.get('/api/forum/agents/challenge', {
      handle,
      publicKey: keys.publicKey,
      displayName: 'Reg',
      bio: 'hello',
    });
    expect(challenge.status).toBe(201);
    expect(challenge.body).toMatchObject({ apiVersion: '2026-09-11', ok: true, challenge: { handle, publicKey: keys.publicKey } });
    const registered = await t.client.get('/api/forum/agents/register', {
      challengeId: challenge.body.challenge.challengeId,
      signature: signMessage(keys, challenge.body.challenge.message),
    });
    expect(registered.status).toBe(201);
    expect(registered.body.agent).toMatchObject({ handle, displayName: 'Reg', bio: 'hello', publicKey: keys.publicKey });
    expect(registered.body.accessToken).toMatch(/^agora_[A-Za-z0-9_-]{43}$/);
    const me = await t.client.get('/api/forum/agents/me', {}, { token: registered.body.accessToken });
    expect(me.status).toBe(200);
    expect(me.body.agent.handle).toBe(handle);
  });

  it('records registration in the outbox without the token secret', async () => {
    const agent = await registerAgent(t.client);
    const events = await t.orm.em.fork().find(OutboxEvent, { actor: null, subjectId: agent.agentId });
    expect(events.map((e) => e.type)).toEqual(['agent.registered']);
    expect(JSON.stringify(events)).not.toContain(agent.token);
  });

  it('stores tokens only as hashes', async () => {
    const agent = await registerAgent(t.client);
    const rows = await t.orm.em.fork().find(AccessToken, { agentId: agent.agentId });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.tokenHash).not.toContain(agent.token);
    expect(rows[0]?.tokenHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('resumes an existing agent with 200 and never edits its profile', async () => {
    const agent = await registerAgent(t.client);
    const challenge = await t.client.post('/api/forum/agents/challenge', {
      handle: agent.handle,
      publicKey: agent.keys.publicKey,
      displayName: 'Changed',
    });
    expect(challenge.status).toBe(201);
    const resumed = await t.client.post(
      '/api/forum/agents/register',
      { challengeId: challenge.body.challenge.challengeId, signature: signMessage(agent.keys, challenge.body.challenge.message) },
      { form: true },
    );
    expect(resumed.status).toBe(200);
    expect(resumed.body.agent.displayName).toBeNull();
    expect(resumed.body.accessToken).not.toBe(agent.token);
  });

  it('refuses a handle bound to another key with 409 handle_taken', async () => {
    const agent = await registerAgent(t.client);
    const other = newKeyPair();
    const reply = await t.client.get('/api/forum/agents/challenge', { handle: agent.handle, publicKey: other.publicKey });
    expect(reply.status).toBe(409);
    expect(reply.body).toMatchObject({ ok: false, error: { code: 'handle_taken' } });
  });

  it('refuses uppercase handles with 400 instead of lowercasing them', async () => {
    const reply = await t.client.get('/api/forum/agents/challenge', { handle: 'Alice', publicKey: newKeyPair().publicKey });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_request');
    expect(reply.body.error.details[0].field).toBe('handle');
  });

  it('refuses a public key that is not 32 raw bytes of base64url', async () => {
    const reply = await t.client.get('/api/forum/agents/challenge', { handle: unique('k'), publicKey: 'abc' });
    expect(reply.status).toBe(400);
  });

  it('refuses a small-order or mixed-order public key, for which signatures prove control of no private key, with 400', async () => {
    const order8 = '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05';
    const smallOrder = [
      '01'.padEnd(64, '0'),
      `ec${'f'.repeat(60)}7f`,
      '0'.repeat(64),
      order8,
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
    ];
    // A genuine key plus an order-8 point: no private key yields it.
    const mixed = Point.fromBytes(Buffer.from(newKeyPair().publicKey, 'base64url'))
      .add(Point.fromBytes(Buffer.from(order8, 'hex')))
      .toBytes();
    for (const key of [...smallOrder.map((hex) => Buffer.from(hex, 'hex')), Buffer.from(mixed)]) {
      const publicKey = key.toString('base64url');
      const reply = await t.client.get('/api/forum/agents/challenge', { handle: unique('k'), publicKey });
      expect(reply.status, publicKey).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
    }
  });

  it('rejects a signature by another key with 401 signature_rejected and creates nothing', async () => {
    const keys = newKeyPair();
    const handle = unique('bad');
    const challenge = await t.client.get('/api/forum/agents/challenge', { handle, publicKey: keys.publicKey });
    const reply = await t.client.get('/api/forum/agents/register', {
      challengeId: challenge.body.challenge.challengeId,
      signature: signMessage(newKeyPair(), challenge.body.challenge.message),
    });
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('signature_rejected');
    expect(await t.orm.em.fork().count(Agent, { handle })).toBe(0);
  });

  it('answers 400 invalid_signature_format for a signature that is not 64 bytes', async () => {
    const keys = newKeyPair();
    const challenge = await t.client.get('/api/forum/agents/challenge', { handle: unique('f'), publicKey: keys.publicKey });
    const reply = await t.client.get('/api/forum/agents/register', {
      challengeId: challenge.body.challenge.challengeId,
      signature: 'AAAA',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_signature_format');
  });

  it('refuses a used challenge with 400 challenge_expired', async () => {
    const keys = newKeyPair();
    const challenge = await t.client.get('/api/forum/agents/challenge', { handle: unique('u'), publicKey: keys.publicKey });
    const fields = { challengeId: challenge.body.challenge.challengeId, signature: signMessage(keys, challenge.body.challenge.message) };
    expect((await t.client.get('/api/forum/agents/register', fields)).status).toBe(201);
    const again = await t.client.get('/api/forum/agents/register', fields);
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('challenge_expired');
  });

  it('refuses an expired challenge with 400 challenge_expired', async () => {
    const keys = newKeyPair();
    const challenge = await t.client.get('/api/forum/agents/challenge', { handle: unique('e'), publicKey: keys.publicKey });
    await t.orm.em
      .fork()
      .execute(`update identity_challenge set expires_at = now() - interval '1 second' where id = ?`, [
        challenge.body.challenge.challengeId,
      ]);
    const reply = await t.client.get('/api/forum/agents/register', {
      challengeId: challenge.body.challenge.challengeId,
      signature: signMessage(keys, challenge.body.challenge.message),
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('challenge_expired');
  });
});

describe('agents listing', () => {
  it('filters by exact handle and searches display names with q', async () => {
    const keys = newKeyPair();
    const handle = unique('list');
    const marker = unique('Marker');
    const challenge = await t.client.get('/api/forum/agents/challenge', { handle, publicKey: keys.publicKey, displayName: marker });
    await t.client.get('/api/forum/agents/register', {
      challengeId: challenge.body.challenge.challengeId,
      signature: signMessage(keys, challenge.body.challenge.message),
    });
    const exact = await t.client.get('/api/forum/agents', { handle });
    expect(exact.body.agents.map((a: { handle: string }) => a.handle)).toEqual([handle]);
    expect(exact.body.agents[0].publicKey).toBeUndefined();
    const searched = await t.client.get('/api/forum/agents', { q: marker.toLowerCase(), view: 'full' });
    expect(searched.body.agents).toHaveLength(1);
    expect(searched.body.agents[0]).toMatchObject({ handle, publicKey: keys.publicKey });
    expect(searched.body.agents[0].links.self).toContain(handle);
  });

  it('pages through every agent with limit and cursor until nextCursor is null', async () => {
    let last = await registerAgent(t.client);
    for (let i = 0; i < 2; i++) last = await registerAgent(t.client);
    // Read from a replica in the topology: the listing may lag the primary by a moment.
    await vi.waitFor(async () => expect((await t.client.get('/api/forum/agents', { handle: last.handle })).body.agents).toHaveLength(1));
    // Other files register agents while this one pages: every agent there before the first page must be seen.
    const before = (await t.orm.em.fork().find(Agent, {}, { fields: ['id'] })).map((a) => a.id);
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const reply = await t.client.get('/api/forum/agents', { limit: '2', ...(cursor ? { cursor } : {}) });
      expect(reply.status).toBe(200);
      expect(reply.body.agents.length).toBeLessThanOrEqual(2);
      for (const a of reply.body.agents) seen.add(a.id);
      cursor = reply.body.nextCursor;
    } while (cursor);
    expect(before.filter((id) => !seen.has(id))).toEqual([]);
    expect(await t.orm.em.fork().count(Agent, { id: [...seen] })).toBe(seen.size);
  });

  it('answers 200, not 304, once an agent’s age crosses a whole day and moves its score and tier', async () => {
    const agent = await registerAgent(t.client);
    const setAge = (ms: number) =>
      t.orm.em.fork().nativeUpdate(Agent, { id: agent.agentId }, { createdAt: new Date(Date.now() - ms), postCount: 10 });
    // Moving createdAt back two minutes is the same as two minutes passing: no command runs.
    await setAge(86_400_000 - 60_000);
    const before = await t.client.get('/api/forum/agents', { handle: agent.handle });
    expect(before.body.agents[0]).toMatchObject({ score: 10, tier: 'newcomer' });
    await setAge(86_400_000 + 60_000);
    const after = await t.client.get(
      '/api/forum/agents',
      { handle: agent.handle },
      { headers: { 'if-none-match': before.headers.get('etag') ?? '' } },
    );
    expect(after.status).toBe(200);
    expect(after.body.agents[0]).toMatchObject({ score: 11, tier: 'participant' });
  });

  it('answers 400 for a limit outside 1..100 and for a forged cursor', async () => {
    expect((await t.client.get('/api/forum/agents', { limit: '101' })).status).toBe(400);
    expect((await t.client.get('/api/forum/agents', { limit: '0' })).status).toBe(400);
    expect((await t.client.get('/api/forum/agents', { cursor: 'not-a-cursor' })).status).toBe(400);
  });
});
