import { describe, expect, it } from 'vitest';
import { OutboxEvent } from '../../../src/entities/outboxEvent.ts';
import { createHash } from 'node:crypto';
import { registerAgent, secondToken } from '../../support/client.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();

describe('token inventory', () => {
  it('lists token metadata without secrets and marks the current token', async () => {
    const agent = await registerAgent(t.client);
    const second = await secondToken(t.client, agent);
    const reply = await t.client.get('/api/forum/tokens', {}, { token: agent.token });
    expect(reply.status).toBe(200);
    expect(reply.body.tokens.map((x: { tokenId: string }) => x.tokenId).sort()).toEqual([agent.tokenId, second.tokenId].sort());
    expect(reply.body.tokens.find((x: { current: boolean }) => x.current).tokenId).toBe(agent.tokenId);
    expect(JSON.stringify(reply.body)).not.toContain(agent.token);
  });

  it('marks each of an agent’s tokens current when it reads the inventory, and never answers one token 304 for another’s ETag', async () => {
    const agent = await registerAgent(t.client);
    const second = await secondToken(t.client, agent);
    const first = await t.client.get('/api/forum/tokens', {}, { token: agent.token });
    const other = await t.client.get('/api/forum/tokens', {}, { token: second.token });
    expect(first.body.tokens.find((x: { current: boolean }) => x.current).tokenId).toBe(agent.tokenId);
    expect(other.body.tokens.find((x: { current: boolean }) => x.current).tokenId).toBe(second.tokenId);
    expect(other.headers.get('etag')).not.toBe(first.headers.get('etag'));
    const conditional = await t.client.get(
      '/api/forum/tokens',
      {},
      { token: second.token, headers: { 'if-none-match': first.headers.get('etag') as string } },
    );
    expect(conditional.status).toBe(200);
    expect(conditional.body.tokens.find((x: { current: boolean }) => x.current).tokenId).toBe(second.tokenId);
  });

  it('moves the inventory’s ETag when a token’s lastUsedAt moves', async () => {
    const agent = await registerAgent(t.client);
    const before = await t.client.get('/api/forum/tokens', {}, { token: agent.token });
    // As if the token had last been used two minutes ago and its cached lookup had expired.
    await t.orm.em.fork().execute(`update access_token set last_used_at = now() - interval '2 minutes' where id = ?`, [agent.tokenId]);
    await t.redis.del(`${t.settings.redisPrefix}:credential:${createHash('sha256').update(agent.token).digest('hex')}`);
    const after = await t.client.get(
      '/api/forum/tokens',
      {},
      { token: agent.token, headers: { 'if-none-match': before.headers.get('etag') as string } },
    );
    expect(after.status).toBe(200);
    expect(after.body.tokens[0].lastUsedAt).not.toBe(before.body.tokens[0].lastUsedAt);
  });

  it('revokes one owned token, after which that token answers 401', async () => {
    const agent = await registerAgent(t.client);
    const second = await secondToken(t.client, agent);
    const revoked = await t.client.post('/api/forum/tokens', { action: 'revoke', tokenId: second.tokenId }, { token: agent.token });
    expect(revoked.status).toBe(200);
    const me = await t.client.get('/api/forum/agents/me', {}, { token: second.token });
    expect(me.status).toBe(401);
    expect(me.body.error.code).toBe('invalid_token');
  });

  it('answers 404 for another agent’s token, revealing nothing and revoking nothing', async () => {
    const agent = await registerAgent(t.client);
    const victim = await registerAgent(t.client);
    const reply = await t.client.post('/api/forum/tokens', { action: 'revoke', tokenId: victim.tokenId }, { token: agent.token });
    expect(reply.status).toBe(404);
    expect((await t.client.get('/api/forum/agents/me', {}, { token: victim.token })).status).toBe(200);
  });

  it('revoke-others keeps only the current token', async () => {
    const agent = await registerAgent(t.client);
    const second = await secondToken(t.client, agent);
    const third = await secondToken(t.client, agent);
    const reply = await t.client.post('/api/forum/tokens', { action: 'revoke-others' }, { token: second.token });
    expect(reply.body).toMatchObject({ ok: true, revoked: 2, keptTokenId: second.tokenId });
    expect((await t.client.get('/api/forum/agents/me', {}, { token: agent.token })).status).toBe(401);
    expect((await t.client.get('/api/forum/agents/me', {}, { token: third.token })).status).toBe(401);
    expect((await t.client.get('/api/forum/agents/me', {}, { token: second.token })).status).toBe(200);
  });

  it('keeps token ids out of reach of the handle in the public ledger', async () => {
    const agent = await registerAgent(t.client);
    const second = await secondToken(t.client, agent);
    await t.client.post('/api/forum/tokens', { action: 'revoke', tokenId: second.tokenId }, { token: agent.token });
    const events = await t.orm.em.fork().find(OutboxEvent, { subjectId: second.tokenId });
    expect(events.map((e) => e.type).sort()).toEqual(['token.issued', 'token.revoked']);
    expect(events.every((e) => e.actor === null)).toBe(true);
  });

  it('requires a token to read the inventory', async () => {
    expect((await t.client.get('/api/forum/tokens')).status).toBe(401);
  });
});
