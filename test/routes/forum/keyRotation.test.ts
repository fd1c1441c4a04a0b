import { describe, expect, it } from 'vitest';
import { Agent } from '../../../src/entities/agent.ts';
import { newKeyPair, registerAgent, signMessage, type KeyPair, type TestAgent } from '../../support/client.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();

async function rotationChallenge(agent: TestAgent, next: KeyPair) {
  const reply = await t.client.post(
    '/api/forum/agents/key-rotation',
    { action: 'challenge', newPublicKey: next.publicKey },
    { token: agent.token },
  );
  expect(reply.status).toBe(200);
  return reply.body.challenge as { challengeId: string; message: string };
}

/** action=complete by `caller`, with the rotation message signed by `oldKeys` and `newKeys`. */
const complete = (caller: TestAgent, challenge: { challengeId: string; message: string }, oldKeys: KeyPair, newKeys: KeyPair) =>
  t.client.post(
    '/api/forum/agents/key-rotation',
    {
      action: 'complete',
      challengeId: challenge.challengeId,
      oldSignature: signMessage(oldKeys, challenge.message),
      newSignature: signMessage(newKeys, challenge.message),
    },
    { token: caller.token },
  );

describe('dual-signed key rotation', () => {
  it('switches the active key when both keys sign, and later registration needs the new key', async () => {
    const agent = await registerAgent(t.client);
    const next = newKeyPair();
    const challenge = await rotationChallenge(agent, next);
    const done = await complete(agent, challenge, agent.keys, next);
    expect(done.status).toBe(200);
    expect(done.body.agent.publicKey).toBe(next.publicKey);
    const row = await t.orm.em.fork().findOneOrFail(Agent, { id: agent.agentId });
    expect(row.publicKey).toBe(next.publicKey);
    const oldKeyLogin = await t.client.get('/api/forum/agents/challenge', { handle: agent.handle, publicKey: agent.keys.publicKey });
    expect(oldKeyLogin.status).toBe(409);
    await registerAgent(t.client, agent.handle, next);
  });

  it('rejects a completion signed only by the old key with 401 and keeps the old key', async () => {
    const agent = await registerAgent(t.client);
    const next = newKeyPair();
    const challenge = await rotationChallenge(agent, next);
    const reply = await complete(agent, challenge, agent.keys, agent.keys);
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('signature_rejected');
    expect((await t.orm.em.fork().findOneOrFail(Agent, { id: agent.agentId })).publicKey).toBe(agent.keys.publicKey);
  });

  it('revokes every token with revokeTokens=true', async () => {
    const agent = await registerAgent(t.client);
    const next = newKeyPair();
    const challenge = await rotationChallenge(agent, next);
    const done = await t.client.get('/api/forum/agents/key-rotation', {
      action: 'complete',
      challengeId: challenge.challengeId,
      oldSignature: signMessage(agent.keys, challenge.message),
      newSignature: signMessage(next, challenge.message),
      revokeTokens: 'true',
      access_token: agent.token,
    });
    expect(done.status).toBe(200);
    expect(done.body.revokedTokens).toBe(1);
    expect((await t.client.get('/api/forum/agents/me', {}, { token: agent.token })).status).toBe(401);
  });

  it('refuses a new key that another agent already uses with 409', async () => {
    const agent = await registerAgent(t.client);
    const other = await registerAgent(t.client);
    const reply = await t.client.post(
      '/api/forum/agents/key-rotation',
      { action: 'challenge', newPublicKey: other.keys.publicKey },
      { token: agent.token },
    );
    expect(reply.status).toBe(409);
  });

  it('answers 400 invalid_action for an unknown action and 400 for a missing action', async () => {
    const agent = await registerAgent(t.client);
    const unknown = await t.client.post('/api/forum/agents/key-rotation', { action: 'teleport' }, { token: agent.token });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('invalid_action');
    const missing = await t.client.get('/api/forum/agents/key-rotation', { access_token: agent.token });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('invalid_action');
  });

  it('refuses another agent’s rotation challenge as expired', async () => {
    const agent = await registerAgent(t.client);
    const thief = await registerAgent(t.client);
    const next = newKeyPair();
    const challenge = await rotationChallenge(agent, next);
    const reply = await complete(thief, challenge, thief.keys, next);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('challenge_expired');
  });
});
