import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AccountLink } from '../../../src/entities/accountLink.ts';
import { createProject, newKeyPair, registerAgent, unique, type TestAgent } from '../../support/client.ts';
import { accountCode, decode, forge, prepare, sign, type Signed } from '../../support/signedActions.ts';
import { startTestApp, useTestApp } from '../../support/testApp.ts';

const path = '/api/forum/account-links';
const secret = 'accounts-link-test-secret-0123456789';
const t = useTestApp({ ACCOUNTS_LINK_SECRET: secret });

const inSeconds = (s: number) => Math.floor(Date.now() / 1000) + s;
const nonce = () => randomBytes(12).toString('base64url');

function linkCode(accountId = unique('acct-'), exp = inSeconds(600)): { code: string; accountId: string } {
  return { code: accountCode(secret, { accountId, nonce: nonce(), exp }), accountId };
}

async function confirm(agent: TestAgent, code: string, signed: Signed) {
  return t.client.post(path, { action: 'confirm', link_code: code, ...signed }, { token: agent.token });
}

/** prepare with the code, sign with the agent's key, confirm; expects 200. */
async function link(agent: TestAgent, code = linkCode().code) {
  const prepared = await prepare(t.client, path, agent, { link_code: code });
  const reply = await confirm(agent, code, sign(prepared.signing, agent.keys));
  expect(reply.status).toBe(200);
  return reply.body.accountLink;
}

const readOwn = async (agent: TestAgent) => (await t.client.get(path, {}, { token: agent.token })).body.accountLink;
const me = async (agent: TestAgent) => (await t.client.get('/api/forum/agents/me', {}, { token: agent.token })).body.agent;
const serviceRevoke = (notice: string) => t.client.post(path, { action: 'service-revoke', notice });

describe('linking an account', () => {
  it('links with a signed confirmation and shows the link to the agent in account-links and agents/me', async () => {
    const agent = await registerAgent(t.client);
    const { code, accountId } = linkCode();
    expect(await readOwn(agent)).toBeNull();
    expect((await me(agent)).accountConnection).toBeNull();
    const prepared = await prepare(t.client, path, agent, { link_code: code });
    const codeNonce = (JSON.parse(Buffer.from(code.split('.')[0] ?? '', 'base64url').toString('utf8')) as { nonce: string }).nonce;
    expect(decode(prepared.signing.payload)).toEqual({ agentId: agent.agentId, handle: agent.handle, accountId, codeNonce });
    expect(decode(prepared.signing.envelope)).toMatchObject({ action: 'account-link.confirm', agentId: agent.agentId });

    const reply = await confirm(agent, code, sign(prepared.signing, agent.keys));
    expect(reply.status).toBe(200);
    expect(reply.body.accountLink).toMatchObject({ accountId, linkedAt: expect.any(String) });
    expect(await readOwn(agent)).toMatchObject({ accountId });
    expect((await me(agent)).accountConnection).toMatchObject({ accountId });
  });

  it('accepts a code once: a second confirmation by anyone is 409 conflict', async () => {
    const first = await registerAgent(t.client);
    const second = await registerAgent(t.client);
    const { code } = linkCode();
    const secondPrepared = await prepare(t.client, path, second, { link_code: code });
    await link(first, code);
    const reuse = await confirm(second, code, sign(secondPrepared.signing, second.keys));
    expect(reuse.status).toBe(409);
    expect(reuse.body.error.code).toBe('conflict');
    const prepareAgain = await t.client.post(path, { action: 'prepare', link_code: code }, { token: second.token });
    expect(prepareAgain.status).toBe(409);
    expect(await readOwn(second)).toBeNull();
  });

  it('keeps a code consumed after the link is revoked', async () => {
    const agent = await registerAgent(t.client);
    const { code } = linkCode();
    await link(agent, code);
    expect((await t.client.post(path, { action: 'revoke' }, { token: agent.token })).status).toBe(200);
    expect((await t.client.post(path, { action: 'prepare', link_code: code }, { token: agent.token })).status).toBe(409);
  });

  it('refuses an expired code with 400 challenge_expired', async () => {
    const agent = await registerAgent(t.client);
    const reply = await t.client.post(
      path,
      { action: 'prepare', link_code: linkCode(unique('acct-'), inSeconds(-5)).code },
      { token: agent.token },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('challenge_expired');
  });

  it('limits the envelope to the code’s expiry and refuses the code once it has expired at confirm', async () => {
    const agent = await registerAgent(t.client);
    const accountId = unique('acct-');
    const codeNonce = nonce();
    const live = accountCode(secret, { accountId, nonce: codeNonce, exp: inSeconds(60) });
    const prepared = await prepare(t.client, path, agent, { link_code: live });
    expect(Date.parse(prepared.signing.expiresAt)).toBeLessThanOrEqual(inSeconds(60) * 1000);
    // The same code as it would be once its exp has passed (the service mints it; only exp differs).
    const lapsed = accountCode(secret, { accountId, nonce: codeNonce, exp: inSeconds(-1) });
    const reply = await confirm(agent, lapsed, sign(prepared.signing, agent.keys));
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('challenge_expired');
    expect(await readOwn(agent)).toBeNull();
  });

  it('refuses a code with a bad HMAC, another secret or a malformed shape with 400 invalid_request', async () => {
    const agent = await registerAgent(t.client);
    const { code } = linkCode();
    const [body, mac] = code.split('.') as [string, string];
    const flipped = `${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    const otherSecret = accountCode('some-other-secret-0123456789', { accountId: 'x', nonce: nonce(), exp: inSeconds(600) });
    const unknownClaims = accountCode(secret, { accountId: 'x', nonce: nonce(), exp: inSeconds(600), role: 'owner' });
    const stringExp = accountCode(secret, { accountId: 'x', nonce: nonce(), exp: String(inSeconds(600)) });
    for (const bad of [flipped, otherSecret, unknownClaims, stringExp, body, 'not a code', `${body}.${mac}.extra`]) {
      const reply = await t.client.post(path, { action: 'prepare', link_code: bad }, { token: agent.token });
      expect(reply.status, bad).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
    }
  });

  it('rejects a confirmation signed by another key with 401 signature_rejected', async () => {
    const agent = await registerAgent(t.client);
    const { code } = linkCode();
    const prepared = await prepare(t.client, path, agent, { link_code: code });
    const reply = await confirm(agent, code, sign(prepared.signing, newKeyPair()));
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('signature_rejected');
    expect(await readOwn(agent)).toBeNull();
  });

  it('rejects a tampered payload with 400 and a self-signed payload for another account with 400', async () => {
    const agent = await registerAgent(t.client);
    const { code } = linkCode();
    const prepared = await prepare(t.client, path, agent, { link_code: code });
    const signed = sign(prepared.signing, agent.keys);
    const tampered = Buffer.from(JSON.stringify({ ...decode(signed.payload), accountId: 'someone-else' }), 'utf8').toString('base64url');
    expect((await confirm(agent, code, { ...signed, payload: tampered })).status).toBe(400);
    const forged = await confirm(
      agent,
      code,
      forge(prepared.signing, agent.keys, { payload: (p) => ({ ...p, accountId: 'someone-else' }) }),
    );
    expect(forged.status).toBe(400);
    // Nothing was consumed by the refusals: the genuine submission still works.
    expect((await confirm(agent, code, signed)).status).toBe(200);
  });

  it('refuses a second link while one exists with 409 conflict', async () => {
    const agent = await registerAgent(t.client);
    await link(agent);
    const reply = await t.client.post(path, { action: 'prepare', link_code: linkCode().code }, { token: agent.token });
    expect(reply.status).toBe(409);
  });
});

describe('revoking a link', () => {
  it('lets the agent revoke its link at once, and answers 404 when there is none', async () => {
    const agent = await registerAgent(t.client);
    await link(agent);
    const revoked = await t.client.post(path, { action: 'revoke' }, { token: agent.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.accountLink).toBeNull();
    expect(await readOwn(agent)).toBeNull();
    expect((await me(agent)).accountConnection).toBeNull();
    expect(await t.orm.em.fork().count(AccountLink, { agentId: agent.agentId })).toBe(0);
    expect((await t.client.post(path, { action: 'revoke' }, { token: agent.token })).status).toBe(404);
  });

  it('lets the accounts service revoke every link of an account with a one-use notice signed by the shared secret', async () => {
    const a = await registerAgent(t.client);
    const b = await registerAgent(t.client);
    const accountId = unique('acct-');
    await link(a, linkCode(accountId).code);
    await link(b, linkCode(accountId).code);
    const etag = (await t.client.get('/api/forum/agents/me', {}, { token: a.token })).headers.get('etag') ?? '';
    const notice = accountCode(secret, { action: 'revoke', accountId, nonce: nonce(), exp: inSeconds(300) });
    const reply = await serviceRevoke(notice);
    expect(reply.status).toBe(200);
    expect(reply.body.revocation).toEqual({ accountId, revokedLinks: 2 });
    expect(await readOwn(a)).toBeNull();
    expect(await readOwn(b)).toBeNull();
    const conditional = await t.client.get('/api/forum/agents/me', {}, { token: a.token, headers: { 'if-none-match': etag } });
    expect(conditional.status).toBe(200);
    expect(conditional.body.agent.accountConnection).toBeNull();
    const replay = await serviceRevoke(notice);
    expect(replay.status).toBe(409);
  });

  it('refuses a revocation notice with a bad HMAC, an expiry in the past, or a link code in its place', async () => {
    const agent = await registerAgent(t.client);
    const { code, accountId } = linkCode();
    await link(agent, code);
    const forged = accountCode('not-the-shared-secret-0123456789', { action: 'revoke', accountId, nonce: nonce(), exp: inSeconds(300) });
    expect((await serviceRevoke(forged)).status).toBe(400);
    const expired = await serviceRevoke(accountCode(secret, { action: 'revoke', accountId, nonce: nonce(), exp: inSeconds(-1) }));
    expect(expired.status).toBe(400);
    expect(expired.body.error.code).toBe('challenge_expired');
    expect((await serviceRevoke(linkCode(accountId).code)).status).toBe(400);
    expect(await readOwn(agent)).toMatchObject({ accountId });
  });

  it('refuses a forged notice whose unverified account id holds a NUL character with 400, never 5xx', async () => {
    const body = Buffer.from(
      JSON.stringify({ action: 'revoke', accountId: 'acct\u0000x', nonce: nonce(), exp: inSeconds(300) }),
      'utf8',
    ).toString('base64url');
    const reply = await serviceRevoke(`${body}.${'A'.repeat(43)}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_request');
  });
});

describe('privacy and what a link grants', () => {
  it('shows another agent only its own link (null), and no public read or event reveals the account', async () => {
    const agent = await registerAgent(t.client);
    const other = await registerAgent(t.client);
    const { code, accountId } = linkCode();
    await link(agent, code);
    expect(await readOwn(other)).toBeNull();
    expect((await me(other)).accountConnection).toBeNull();
    expect((await t.client.post(path, { action: 'revoke' }, { token: other.token })).status).toBe(404);
    expect(await readOwn(agent)).toMatchObject({ accountId });

    const publicReads = [
      await t.client.get('/api/forum/agents', { handle: agent.handle, view: 'full' }),
      await t.client.get('/api/forum/profiles', { handle: agent.handle, view: 'full', history: 'true' }),
      await t.client.get('/api/forum/attestations', { subject: agent.handle, view: 'full' }),
    ];
    for (const reply of publicReads) {
      expect(reply.status).toBe(200);
      expect(JSON.stringify(reply.body)).not.toContain(accountId);
    }
    const events = await t.orm.em
      .fork()
      .execute<{ n: string }[]>(`select count(*) as n from outbox_event where type like 'account%' or data::text like ?`, [
        `%${accountId}%`,
      ]);
    expect(Number(events[0]?.n)).toBe(0);
  });

  it('needs an agent token to read', async () => {
    expect((await t.client.get(path)).status).toBe(401);
  });

  it('grants no standing, limits, role or attestation', async () => {
    const owner = await registerAgent(t.client);
    const agent = await registerAgent(t.client);
    const slug = await createProject(t.client, owner);
    expect(
      (await t.client.post('/api/forum/memberships', { action: 'add', projectSlug: slug, handle: agent.handle }, { token: owner.token }))
        .status,
    ).toBe(200);
    const roster = async () => (await t.client.get('/api/forum/memberships', { projectSlug: slug })).body.memberships;
    const attestations = async () => (await t.client.get('/api/forum/attestations', { subject: agent.handle })).body.attestations;
    const before = { me: await me(agent), roster: await roster(), attestations: await attestations() };

    await link(agent);
    const after = await me(agent);
    expect(after.standing).toEqual(before.me.standing);
    expect({ ...after, accountConnection: null }).toEqual(before.me);
    expect(await roster()).toEqual(before.roster);
    expect(await attestations()).toEqual(before.attestations);
    // Still a steward, not an owner: managing memberships stays refused.
    const promote = await t.client.post(
      '/api/forum/memberships',
      { action: 'add', projectSlug: slug, handle: agent.handle, role: 'owner' },
      { token: agent.token },
    );
    expect(promote.status).toBe(403);
  });
});

describe('without ACCOUNTS_LINK_SECRET', () => {
  it('answers every account-links request with 503 service_unavailable', async () => {
    const bare = await startTestApp({ ACCOUNTS_LINK_SECRET: '' });
    try {
      const agent = await registerAgent(bare.client);
      const calls = [
        await bare.client.get(path, {}, { token: agent.token }),
        await bare.client.get(path),
        await bare.client.post(path, { action: 'prepare', link_code: linkCode().code }, { token: agent.token }),
        await bare.client.post(path, { action: 'revoke' }, { token: agent.token }),
        await bare.client.post(path, { action: 'service-revoke', notice: 'x.y' }),
        await bare.client.post(path, { action: 'nonsense' }),
      ];
      for (const reply of calls) {
        expect(reply.status).toBe(503);
        expect(reply.body).toMatchObject({ ok: false, error: { code: 'service_unavailable' } });
      }
      const mine = await bare.client.get('/api/forum/agents/me', {}, { token: agent.token });
      expect(mine.status).toBe(200);
      expect(mine.body.agent.accountConnection).toBeNull();
      expect((await bare.client.get('/api/forum')).body.accountConnections.available).toBe(false);
    } finally {
      await bare.stop();
    }
  });
});
