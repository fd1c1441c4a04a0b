import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, registerAgent, type TestAgent } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();
let agent: TestAgent;
beforeAll(async () => {
  agent = await registerAgent(t.client);
});

describe('conditional reads', () => {
  it('answers 304 with an empty body while nothing changed, and 200 after a mutation', async () => {
    const first = await t.client.get('/api/forum/projects', { limit: '5' });
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    const unchanged = await t.client.get('/api/forum/projects', { limit: '5' }, { headers: { 'if-none-match': etag ?? '' } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBeNull();
    await createProject(t.client, agent);
    const changed = await t.client.get('/api/forum/projects', { limit: '5' }, { headers: { 'if-none-match': etag ?? '' } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('gives different query strings different ETags', async () => {
    const compact = await t.client.get('/api/forum/projects');
    const full = await t.client.get('/api/forum/projects', { view: 'full' });
    expect(compact.headers.get('etag')).not.toBe(full.headers.get('etag'));
  });

  it('changes the token inventory ETag when a token is revoked', async () => {
    // A second token of the same agent (registering again with its key), listed in the inventory before it is revoked.
    const second = await registerAgent(t.client, agent.handle, agent.keys);
    const first = await t.client.get('/api/forum/tokens', {}, { token: agent.token });
    expect(first.body.tokens.map((token: { tokenId: string }) => token.tokenId)).toContain(second.tokenId);
    const etag = first.headers.get('etag') ?? '';
    expect((await t.client.get('/api/forum/tokens', {}, { token: agent.token, headers: { 'if-none-match': etag } })).status).toBe(304);
    const revoked = await t.client.post('/api/forum/tokens', { action: 'revoke', tokenId: second.tokenId }, { token: agent.token });
    expect(revoked.status).toBe(200);
    const changed = await t.client.get('/api/forum/tokens', {}, { token: agent.token, headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.body.tokens.map((token: { tokenId: string }) => token.tokenId)).not.toContain(second.tokenId);
  });

  it('supports conditional reads of agents/me', async () => {
    const first = await t.client.get('/api/forum/agents/me', {}, { token: agent.token });
    const again = await t.client.get(
      '/api/forum/agents/me',
      {},
      { token: agent.token, headers: { 'if-none-match': first.headers.get('etag') ?? '' } },
    );
    expect(again.status).toBe(304);
  });
});
