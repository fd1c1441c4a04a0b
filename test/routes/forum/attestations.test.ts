import { describe, expect, it } from 'vitest';
import { Attestation } from '../../../src/entities/attestation.ts';
import { OutboxEvent } from '../../../src/entities/outboxEvent.ts';
import { newKeyPair, registerAgent, type TestAgent } from '../../support/client.ts';
import { decode, forge, prepare, rotateKey, sign, type Signed } from '../../support/signedActions.ts';
import { useTestApp } from '../../support/testApp.ts';

const path = '/api/forum/attestations';
const DAY_MS = 86_400_000;
const t = useTestApp();

async function create(issuer: TestAgent, signed: Signed, extra: Record<string, unknown> = {}) {
  return t.client.post(path, { action: 'create', ...signed, ...extra }, { token: issuer.token });
}

/** prepare, sign with the issuer's key, create; expects 200. */
async function attest(issuer: TestAgent, subject: TestAgent, fields: Record<string, unknown> = {}) {
  const prepared = await prepare(t.client, path, issuer, { subject: subject.handle, kind: 'vouch', claim: 'reliable reviewer', ...fields });
  const reply = await create(issuer, sign(prepared.signing, issuer.keys));
  expect(reply.status).toBe(200);
  return reply.body.attestation;
}

async function prepareStatus(issuer: TestAgent, fields: Record<string, unknown>) {
  return t.client.post(path, { action: 'prepare', kind: 'capability', claim: 'can review', ...fields }, { token: issuer.token });
}

describe('attestation prepare and create', () => {
  it('creates an attestation signed by the issuer and returns a URL-safe nonce bound into payload and envelope', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const expiresAt = new Date(Date.now() + 30 * DAY_MS).toISOString();
    const prepared = await prepare(t.client, path, issuer, {
      subject: subject.handle,
      kind: 'affiliation',
      claim: 'member of the review guild',
      evidenceUrl: 'https://example.org/guild',
      expiresAt,
    });
    expect(prepared.body.nonce).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decode(prepared.signing.payload)).toMatchObject({
      issuer: issuer.handle,
      subject: subject.handle,
      kind: 'affiliation',
      nonce: prepared.body.nonce,
      expiresAt,
    });
    expect(decode(prepared.signing.envelope)).toMatchObject({ action: 'attestation.create', nonce: prepared.body.nonce });

    const reply = await create(issuer, sign(prepared.signing, issuer.keys), { nonce: prepared.body.nonce, view: 'full' });
    expect(reply.status).toBe(200);
    expect(reply.body.attestation).toMatchObject({
      issuer: issuer.handle,
      subject: subject.handle,
      kind: 'affiliation',
      claim: 'member of the review guild',
      evidenceUrl: 'https://example.org/guild',
      expiresAt,
      status: 'active',
      nonce: prepared.body.nonce,
      signingKey: issuer.keys.publicKey,
    });
    const events = await t.orm.em
      .fork()
      .find(OutboxEvent, { type: 'attestation.created', subjectId: reply.body.attestation.attestationId });
    expect(events).toHaveLength(1);
  });

  it('filters the listing by issuer, subject and kind', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const other = await registerAgent(t.client);
    await attest(issuer, subject, { kind: 'vouch' });
    await attest(issuer, other, { kind: 'capability' });
    await attest(other, subject, { kind: 'capability' });
    const byIssuer = await t.client.get(path, { issuer: issuer.handle });
    expect(byIssuer.body.attestations).toHaveLength(2);
    const bySubject = await t.client.get(path, { subject: subject.handle });
    expect(bySubject.body.attestations.map((a: { issuer: string }) => a.issuer).sort()).toEqual([issuer.handle, other.handle].sort());
    const byKind = await t.client.get(path, { issuer: issuer.handle, kind: 'capability' });
    expect(byKind.body.attestations).toEqual([expect.objectContaining({ subject: other.handle, kind: 'capability' })]);
    expect(byKind.body.attestations[0].signature).toBeUndefined();
  });

  it('refuses an evidenceUrl that is not https with 400', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const reply = await prepareStatus(issuer, { subject: subject.handle, evidenceUrl: 'http://example.org/proof' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.details[0].field).toBe('evidenceUrl');
  });

  it('refuses an expiresAt more than 366 days ahead, in the past or not RFC 3339 with 400', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    for (const expiresAt of [
      new Date(Date.now() + 367 * DAY_MS).toISOString(),
      new Date(Date.now() - DAY_MS).toISOString(),
      '2030-01-01',
      'tomorrow',
    ]) {
      const reply = await prepareStatus(issuer, { subject: subject.handle, expiresAt });
      expect(reply.status, expiresAt).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
    }
    expect(
      (await prepareStatus(issuer, { subject: subject.handle, expiresAt: new Date(Date.now() + 365 * DAY_MS).toISOString() })).status,
    ).toBe(200);
  });

  it('refuses an expiresAt on a day its month does not have with 400, in prepare and in a signed payload', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    // The next 30-day month: its day 31 does not exist (Date.parse would roll it over to the 1st of the next month).
    const month = new Date();
    do month.setUTCMonth(month.getUTCMonth() + 1, 1);
    while (![3, 5, 8, 10].includes(month.getUTCMonth()));
    const expiresAt = `${month.toISOString().slice(0, 8)}31T12:00:00Z`;
    const prepared = await prepareStatus(issuer, { subject: subject.handle, expiresAt });
    expect(prepared.status, expiresAt).toBe(400);
    expect(prepared.body.error.code).toBe('invalid_request');

    const valid = await prepare(t.client, path, issuer, { subject: subject.handle, kind: 'vouch', claim: 'dated' });
    const reply = await create(issuer, forge(valid.signing, issuer.keys, { payload: (p) => ({ ...p, expiresAt }) }));
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'payload.expiresAt' }] });
  });

  it('refuses a claim longer than 500 characters and an unknown kind with 400', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    expect((await prepareStatus(issuer, { subject: subject.handle, claim: 'x'.repeat(501) })).status).toBe(400);
    expect((await prepareStatus(issuer, { subject: subject.handle, kind: 'friendship' })).status).toBe(400);
  });

  it('answers 404 for an unknown subject', async () => {
    const issuer = await registerAgent(t.client);
    const reply = await prepareStatus(issuer, { subject: 'no-such-agent-here' });
    expect(reply.status).toBe(404);
  });

  it('rejects a signature by another key with 401 signature_rejected', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, issuer, { subject: subject.handle, kind: 'vouch', claim: 'forged' });
    const reply = await create(issuer, sign(prepared.signing, newKeyPair()));
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('signature_rejected');
    expect(await t.orm.em.fork().count(Attestation, { issuerId: issuer.agentId })).toBe(0);
  });

  it('rejects a signature by the issuer’s rotated-out key with 401', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, issuer, { subject: subject.handle, kind: 'vouch', claim: 'before rotation' });
    await rotateKey(t.client, issuer);
    const reply = await create(issuer, sign(prepared.signing, issuer.keys));
    expect(reply.status).toBe(401);
  });

  it('rejects a replayed nonce with 409 conflict', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, issuer, { subject: subject.handle, kind: 'vouch', claim: 'once only' });
    const signed = sign(prepared.signing, issuer.keys);
    expect((await create(issuer, signed)).status).toBe(200);
    const replay = await create(issuer, signed);
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe('conflict');
    expect(await t.orm.em.fork().count(Attestation, { issuerId: issuer.agentId })).toBe(1);
  });

  it('rejects a tampered payload with 400', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, issuer, { subject: subject.handle, kind: 'vouch', claim: 'modest claim' });
    const signed = sign(prepared.signing, issuer.keys);
    const tampered = Buffer.from(JSON.stringify({ ...decode(signed.payload), claim: 'grand claim' }), 'utf8').toString('base64url');
    const reply = await create(issuer, { ...signed, payload: tampered });
    expect(reply.status).toBe(400);
  });

  it('rechecks a self-signed payload: an http evidenceUrl or a nonce other than the envelope’s is 400', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const prepared = await prepare(t.client, path, issuer, { subject: subject.handle, kind: 'vouch', claim: 'self-built' });
    const http = await create(
      issuer,
      forge(prepared.signing, issuer.keys, { payload: (p) => ({ ...p, evidenceUrl: 'http://example.org' }) }),
    );
    expect(http.status).toBe(400);
    const nonce = await create(issuer, forge(prepared.signing, issuer.keys, { payload: (p) => ({ ...p, nonce: 'another-nonce-value' }) }));
    expect(nonce.status).toBe(400);
    const param = await create(issuer, sign(prepared.signing, issuer.keys), { nonce: 'not-the-envelope-nonce' });
    expect(param.status).toBe(400);
  });

  it('rejects a genuinely signed payload whose subjectId or claim holds a NUL character with 400, never 5xx', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    for (const change of [{ subjectId: `${subject.agentId}\u0000` }, { claim: 'nul\u0000inside' }]) {
      const prepared = await prepare(t.client, path, issuer, { subject: subject.handle, kind: 'vouch', claim: 'plain' });
      const reply = await create(issuer, forge(prepared.signing, issuer.keys, { payload: (p) => ({ ...p, ...change }) }));
      expect(reply.status, Object.keys(change)[0]).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
    }
    expect(await t.orm.em.fork().count(Attestation, { issuerId: issuer.agentId })).toBe(0);
  });
});

describe('attestation revocation and status', () => {
  it('lets only the issuer revoke: others 403, unknown 404, a second revoke 409', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const attestation = await attest(issuer, subject);
    const bySubject = await t.client.post(path, { action: 'revoke', attestationId: attestation.attestationId }, { token: subject.token });
    expect(bySubject.status).toBe(403);
    expect(bySubject.body.error.code).toBe('forbidden');
    const unknown = await t.client.post(
      path,
      { action: 'revoke', attestationId: 'att_0000000000aaaaaaaaaaaaaaaa' },
      { token: issuer.token },
    );
    expect(unknown.status).toBe(404);
    const revoked = await t.client.post(path, { action: 'revoke', attestationId: attestation.attestationId }, { token: issuer.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.attestation.status).toBe('revoked');
    const again = await t.client.post(path, { action: 'revoke', attestationId: attestation.attestationId }, { token: issuer.token });
    expect(again.status).toBe(409);
    const listed = await t.client.get(path, { issuer: issuer.handle, view: 'full' });
    expect(listed.body.attestations[0]).toMatchObject({ status: 'revoked', revokedAt: expect.any(String) });
    expect(await t.orm.em.fork().count(OutboxEvent, { type: 'attestation.revoked', subjectId: attestation.attestationId })).toBe(1);
  });

  it('shows an attestation past its expiry with status expired', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const attestation = await attest(issuer, subject, { expiresAt: new Date(Date.now() + DAY_MS).toISOString() });
    await t.orm.em
      .fork()
      .execute(`update attestation set expires_at = now() - interval '1 second' where id = ?`, [attestation.attestationId]);
    const listed = await t.client.get(path, { issuer: issuer.handle });
    expect(listed.body.attestations[0].status).toBe('expired');
  });

  it('answers 304 to a conditional listing until an attestation is created or revoked', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const first = await t.client.get(path, { subject: subject.handle });
    const etag = first.headers.get('etag') ?? '';
    expect((await t.client.get(path, { subject: subject.handle }, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const attestation = await attest(issuer, subject);
    const created = await t.client.get(path, { subject: subject.handle }, { headers: { 'if-none-match': etag } });
    expect(created.status).toBe(200);
    const etag2 = created.headers.get('etag') ?? '';
    await t.client.post(path, { action: 'revoke', attestationId: attestation.attestationId }, { token: issuer.token });
    const revoked = await t.client.get(path, { subject: subject.handle }, { headers: { 'if-none-match': etag2 } });
    expect(revoked.status).toBe(200);
    expect(revoked.body.attestations[0].status).toBe('revoked');
  });

  it('never changes the subject’s or the issuer’s score, tier or limits', async () => {
    const issuer = await registerAgent(t.client);
    const subject = await registerAgent(t.client);
    const standing = async (agent: TestAgent) =>
      (await t.client.get('/api/forum/agents/me', {}, { token: agent.token })).body.agent.standing;
    const before = { subject: await standing(subject), issuer: await standing(issuer) };
    await attest(issuer, subject, { kind: 'vouch' });
    await attest(issuer, subject, { kind: 'capability' });
    await attest(issuer, subject, { kind: 'external-proof', evidenceUrl: 'https://example.org/proof' });
    expect(await standing(subject)).toEqual(before.subject);
    expect(await standing(issuer)).toEqual(before.issuer);
  });
});
