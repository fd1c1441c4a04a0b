import { describe, expect, it } from 'vitest';
import { Agent } from '../../../src/entities/agent.ts';
import { OutboxEvent } from '../../../src/entities/outboxEvent.ts';
import { ProfileRevision } from '../../../src/entities/profileRevision.ts';
import { createProject, newKeyPair, registerAgent, signMessage, unique, type TestAgent } from '../../support/client.ts';
import { decode, forge, prepare, rotateKey, sign, type Signed } from '../../support/signedActions.ts';
import { useTestApp } from '../../support/testApp.ts';

const path = '/api/forum/profiles';
const t = useTestApp();

async function publish(agent: TestAgent, signed: Signed) {
  return t.client.post(path, { action: 'publish', ...signed }, { token: agent.token });
}

/** prepare, sign with the agent's key, publish; expects 200. */
async function revise(agent: TestAgent, fields: Record<string, unknown>) {
  const prepared = await prepare(t.client, path, agent, fields);
  const reply = await publish(agent, sign(prepared.signing, agent.keys));
  expect(reply.status).toBe(200);
  return reply.body.profile;
}

describe('profile prepare and publish', () => {
  it('publishes a first revision with sequence 1 and a null predecessor and updates the agent profile', async () => {
    const agent = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: 'First Name', bio: 'first bio' });
    expect(prepared.signing.message).toBe(Buffer.from(prepared.signing.envelope, 'base64url').toString('utf8'));
    expect(decode(prepared.signing.payload)).toEqual({
      agentId: agent.agentId,
      handle: agent.handle,
      sequence: 1,
      predecessor: null,
      displayName: 'First Name',
      bio: 'first bio',
    });
    expect(decode(prepared.signing.envelope)).toMatchObject({
      version: 'forum-signed-action/v1',
      action: 'profile.publish',
      agentId: agent.agentId,
    });

    const reply = await publish(agent, sign(prepared.signing, agent.keys));
    expect(reply.status).toBe(200);
    expect(reply.body.profile).toMatchObject({
      agentId: agent.agentId,
      handle: agent.handle,
      sequence: 1,
      predecessor: null,
      displayName: 'First Name',
      bio: 'first bio',
    });
    const me = await t.client.get('/api/forum/agents/me', {}, { token: agent.token });
    expect(me.body.agent).toMatchObject({ displayName: 'First Name', bio: 'first bio' });
    const events = await t.orm.em.fork().find(OutboxEvent, { type: 'profile.published', subjectId: reply.body.profile.revisionId });
    expect(events).toHaveLength(1);
  });

  it('keeps the current bio when bio is omitted and clears it when bio is explicitly empty', async () => {
    const agent = await registerAgent(t.client);
    await revise(agent, { displayName: 'Keeper', bio: 'kept bio' });
    const kept = await revise(agent, { displayName: 'Renamed' });
    expect(kept).toMatchObject({ displayName: 'Renamed', bio: 'kept bio' });
    const cleared = await revise(agent, { bio: '' });
    expect(cleared).toMatchObject({ displayName: 'Renamed', bio: null });
    const noName = await revise(agent, { displayName: '' });
    expect(noName.displayName).toBeNull();
    const row = await t.orm.em.fork().findOneOrFail(Agent, { id: agent.agentId });
    expect(row.bio).toBeNull();
    expect(row.displayName).toBeNull();
  });

  it('chains every revision to the hash of the one before and lists the whole chain with history=true', async () => {
    const agent = await registerAgent(t.client);
    const first = await revise(agent, { displayName: 'One' });
    const second = await revise(agent, { displayName: 'Two' });
    const third = await revise(agent, { displayName: 'Three' });
    expect(second.predecessor).toBe(first.hash);
    expect(third.predecessor).toBe(second.hash);

    const history = await t.client.get(path, { handle: agent.handle, history: 'true', view: 'full' });
    expect(history.status).toBe(200);
    expect(history.body.profiles.map((p: { sequence: number }) => p.sequence)).toEqual([1, 2, 3]);
    for (const revision of history.body.profiles) {
      // The published hash is the SHA-256 of the exact signed message, so anyone can recheck the chain.
      const message = Buffer.from(revision.envelope, 'base64url');
      const { createHash } = await import('node:crypto');
      expect(createHash('sha256').update(message).digest('base64url')).toBe(revision.hash);
    }
    const byId = await t.client.get(path, { agentId: agent.agentId, history: 'true', limit: '2' });
    expect(byId.body.profiles).toHaveLength(2);
    const rest = await t.client.get(path, { agentId: agent.agentId, history: 'true', limit: '2', cursor: byId.body.nextCursor });
    expect(rest.body.profiles.map((p: { sequence: number }) => p.sequence)).toEqual([3]);
    expect(rest.body.nextCursor).toBeNull();
  });

  it('lists only the latest revision per agent by default, filtered by handle or agentId', async () => {
    const a = await registerAgent(t.client);
    const b = await registerAgent(t.client);
    await revise(a, { displayName: 'A1' });
    await revise(a, { displayName: 'A2' });
    await revise(b, { displayName: 'B1' });
    const byHandle = await t.client.get(path, { handle: a.handle });
    expect(byHandle.body.profiles).toEqual([expect.objectContaining({ handle: a.handle, sequence: 2, displayName: 'A2' })]);
    const byId = await t.client.get(path, { agentId: b.agentId });
    expect(byId.body.profiles).toEqual([expect.objectContaining({ handle: b.handle, sequence: 1, displayName: 'B1' })]);
    const all = await t.client.get(path, { limit: '100' });
    const handles = all.body.profiles.map((p: { handle: string }) => p.handle);
    expect(handles.filter((h: string) => h === a.handle)).toHaveLength(1);
  });

  it('shows payload, envelope, signature and signing key only in the full view', async () => {
    const agent = await registerAgent(t.client);
    await revise(agent, { displayName: 'Viewed' });
    const compact = await t.client.get(path, { handle: agent.handle });
    expect(compact.body.profiles[0].signature).toBeUndefined();
    expect(compact.body.profiles[0].payload).toBeUndefined();
    const full = await t.client.get(path, { handle: agent.handle, view: 'full' });
    expect(full.body.profiles[0]).toMatchObject({
      signingKey: agent.keys.publicKey,
      signature: expect.any(String),
      payload: expect.any(String),
      envelope: expect.any(String),
    });
  });

  it('answers 304 to a conditional read until a new revision is published', async () => {
    const agent = await registerAgent(t.client);
    await revise(agent, { displayName: 'Etag One' });
    const first = await t.client.get(path, { handle: agent.handle });
    const etag = first.headers.get('etag') ?? '';
    const again = await t.client.get(path, { handle: agent.handle }, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    await revise(agent, { displayName: 'Etag Two' });
    const changed = await t.client.get(path, { handle: agent.handle }, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.body.profiles[0].displayName).toBe('Etag Two');
  });
});

describe('profile publish refusals', () => {
  it('rejects a signature by another key with 401 signature_rejected and changes nothing', async () => {
    const agent = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: 'Forged' });
    const reply = await publish(agent, sign(prepared.signing, newKeyPair()));
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('signature_rejected');
    expect(await t.orm.em.fork().count(ProfileRevision, { agentId: agent.agentId })).toBe(0);
  });

  it('rejects a tampered payload with 400', async () => {
    const agent = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: 'Honest' });
    const signed = sign(prepared.signing, agent.keys);
    const tampered = Buffer.from(
      JSON.stringify({ ...decode(signed.payload), displayName: 'Tampered' }).replace(/\s/g, ''),
      'utf8',
    ).toString('base64url');
    const reply = await publish(agent, { ...signed, payload: tampered });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_request');
    expect((await t.orm.em.fork().findOneOrFail(Agent, { id: agent.agentId })).displayName).toBeNull();
  });

  it('rejects a replayed envelope nonce with 409 conflict', async () => {
    const agent = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: 'Once' });
    const signed = sign(prepared.signing, agent.keys);
    expect((await publish(agent, signed)).status).toBe(200);
    const replay = await publish(agent, signed);
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe('conflict');
  });

  it('rejects a stale sequence with 409 sequence_conflict', async () => {
    const agent = await registerAgent(t.client);
    const first = await prepare(t.client, path, agent, { displayName: 'Racer A' });
    const second = await prepare(t.client, path, agent, { displayName: 'Racer B' });
    expect((await publish(agent, sign(first.signing, agent.keys))).status).toBe(200);
    const stale = await publish(agent, sign(second.signing, agent.keys));
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('sequence_conflict');
  });

  it('rejects a self-signed payload that skips ahead in the chain with 409 sequence_conflict', async () => {
    const agent = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: 'Skipper' });
    const reply = await publish(agent, forge(prepared.signing, agent.keys, { payload: (p) => ({ ...p, sequence: 5 }) }));
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe('sequence_conflict');
  });

  it('rejects a genuinely signed payload that names another agent with 400', async () => {
    const agent = await registerAgent(t.client);
    const other = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: 'Impostor' });
    const reply = await publish(
      agent,
      forge(prepared.signing, agent.keys, { payload: (p) => ({ ...p, agentId: other.agentId, handle: other.handle }) }),
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_request');
    expect((await t.orm.em.fork().findOneOrFail(Agent, { id: other.agentId })).displayName).toBeNull();
  });

  it('rejects a genuinely signed envelope with an unusable nonce with 400, never 5xx', async () => {
    const agent = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: 'Long nonce' });
    const reply = await publish(agent, forge(prepared.signing, agent.keys, { envelope: (e) => ({ ...e, nonce: 'n'.repeat(300) }) }));
    expect(reply.status).toBe(400);
  });

  it('rejects a genuinely signed payload whose displayName holds a NUL character or an unpaired surrogate with 400, never 5xx', async () => {
    const agent = await registerAgent(t.client);
    for (const displayName of ['nul\u0000inside', 'half \ud800 pair']) {
      const prepared = await prepare(t.client, path, agent, { displayName: 'Plain' });
      const reply = await publish(agent, forge(prepared.signing, agent.keys, { payload: (p) => ({ ...p, displayName }) }));
      expect(reply.status, JSON.stringify(displayName)).toBe(400);
      // RFC 8785 cannot represent a lone surrogate, so that payload is refused as not canonical.
      expect(reply.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: expect.stringMatching(/^payload/) }] });
    }
    expect(await t.orm.em.fork().count(ProfileRevision, { agentId: agent.agentId })).toBe(0);
  });

  it('rejects a genuinely signed envelope past its expiry with 400 stale_envelope', async () => {
    const agent = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: 'Late' });
    const reply = await publish(
      agent,
      forge(prepared.signing, agent.keys, { envelope: (e) => ({ ...e, expiresAt: new Date(Date.now() - 1000).toISOString() }) }),
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('stale_envelope');
  });

  it('rejects a genuinely signed envelope that would stay valid beyond the 24-hour nonce retention', async () => {
    const agent = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: 'Forever' });
    const farAhead = new Date(Date.now() + 25 * 3600_000).toISOString();
    const reply = await publish(agent, forge(prepared.signing, agent.keys, { envelope: (e) => ({ ...e, expiresAt: farAhead }) }));
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('stale_envelope');
    expect(await t.orm.em.fork().count(ProfileRevision, { agentId: agent.agentId })).toBe(0);
  });

  it('rejects a signed profile envelope replayed as an attestation or a checkpoint with 400 stale_envelope', async () => {
    const agent = await registerAgent(t.client);
    const projectSlug = await createProject(t.client, agent);
    const signed = sign((await prepare(t.client, path, agent, { displayName: 'Elsewhere' })).signing, agent.keys);
    const asAttestation = await t.client.post('/api/forum/attestations', { action: 'create', ...signed }, { token: agent.token });
    const asCheckpoint = await t.client.post(
      '/api/forum/checkpoints',
      { action: 'publish', projectSlug, ...signed },
      { token: agent.token },
    );
    for (const reply of [asAttestation, asCheckpoint]) {
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('stale_envelope');
    }
    // Refused elsewhere, the envelope is still unspent for what it was signed for.
    expect((await publish(agent, signed)).status).toBe(200);
  });

  it('rejects a revision signed with a key rotated out after prepare, and accepts the new key', async () => {
    const agent = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: 'Before rotation' });
    const newKeys = await rotateKey(t.client, agent);
    const old = await publish(agent, sign(prepared.signing, agent.keys));
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe('signature_rejected');
    const fresh = await prepare(t.client, path, agent, { displayName: 'After rotation' });
    const oldKeyOnFresh = await publish(agent, sign(fresh.signing, agent.keys));
    expect(oldKeyOnFresh.status).toBe(401);
    const ok = await publish(agent, sign(fresh.signing, newKeys));
    expect(ok.status).toBe(200);
    expect(ok.body.profile.sequence).toBe(1);
  });

  it('needs an agent token to prepare', async () => {
    const reply = await t.client.post(path, { action: 'prepare', displayName: 'x' });
    expect(reply.status).toBe(401);
  });

  it('refuses a signature that is not 64 bytes with 400 invalid_signature_format', async () => {
    const agent = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, agent, { displayName: unique('N') });
    const reply = await publish(agent, {
      payload: prepared.signing.payload,
      envelope: prepared.signing.envelope,
      signature: signMessage(agent.keys, 'x').slice(0, 20),
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_signature_format');
  });
});
