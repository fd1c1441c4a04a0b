import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { registerAgent, unique } from '../support/client.ts';
import { casesPath } from '../support/relay.ts';
import { accountCode, sign, type Signing } from '../support/signedActions.ts';
import { useTestApp } from '../support/testApp.ts';

const secret = 'accounts-link-test-secret-0123456789';
const written: string[] = [];
const t = useTestApp({ LOG_LEVEL: 'trace', ACCOUNTS_LINK_SECRET: secret }, undefined, {
  logDestination: { write: (line: string) => void written.push(line) },
});

/** The logged request line of a request id, once the response event has written it (bounded wait). */
async function urlLoggedFor(requestId: string): Promise<string> {
  return vi.waitFor(
    () => {
      const line = written
        .map((text) => JSON.parse(text) as { requestId?: string; url?: string })
        .find((entry) => entry.requestId === requestId && typeof entry.url === 'string');
      if (!line) throw new Error(`no request line for ${requestId}`);
      return line.url as string;
    },
    { timeout: 5000, interval: 10 },
  );
}

const traced = (id: string) => ({ headers: { 'x-request-id': id } });

describe('what the request log never holds', () => {
  it('keeps no link code, signed payload, envelope, signature, token or account id from an account link made entirely over GET', async () => {
    const agent = await registerAgent(t.client);
    const accountId = unique('acct-private-');
    const code = accountCode(secret, { accountId, nonce: randomBytes(12).toString('base64url'), exp: Math.floor(Date.now() / 1000) + 600 });
    const path = '/api/forum/account-links';
    const prepared = await t.client.get(path, { action: 'prepare', link_code: code, access_token: agent.token }, traced('link-prepare'));
    expect(prepared.status).toBe(200);
    const signed = sign(prepared.body.signing as Signing, agent.keys);
    const confirmed = await t.client.get(
      path,
      { action: 'confirm', link_code: code, ...signed, access_token: agent.token, request_id: unique('rk-') },
      traced('link-confirm'),
    );
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.accountLink.accountId).toBe(accountId);
    const read = await t.client.get(path, { access_token: agent.token }, traced('link-read'));
    expect(read.body.accountLink.accountId).toBe(accountId);
    const me = await t.client.get('/api/forum/agents/me', { access_token: agent.token }, traced('link-me'));
    expect(me.body.agent.accountConnection.accountId).toBe(accountId);
    const revoked = await t.client.get(path, { action: 'revoke', access_token: agent.token }, traced('link-revoke'));
    expect(revoked.status).toBe(200);

    expect(await urlLoggedFor('link-confirm')).toBe(
      `${path}?action=confirm&link_code=[REDACTED]&payload=[REDACTED]&envelope=[REDACTED]&signature=[REDACTED]&access_token=[REDACTED]&request_id=[REDACTED]`,
    );
    for (const id of ['link-prepare', 'link-read', 'link-me', 'link-revoke']) await urlLoggedFor(id);
    const everything = written.join('\n');
    for (const secretValue of [code, signed.payload, signed.envelope, signed.signature, agent.token, accountId])
      expect(everything).not.toContain(secretValue);
  });

  it('keeps the parameter names of a relay case opened over GET, never its summary or detail', async () => {
    const agent = await registerAgent(t.client);
    const marker = `private-aid-${randomBytes(8).toString('hex')}`;
    const opened = await t.client.get(
      casesPath,
      {
        action: 'create',
        kind: 'aid',
        urgency: 'urgent',
        summary: `${marker} summary`,
        detail: `${marker} detail`,
        safetyAcknowledged: 'true',
        access_token: agent.token,
      },
      traced('case-open'),
    );
    expect(opened.status).toBe(200);
    expect(await urlLoggedFor('case-open')).toBe(
      `${casesPath}?action=create&kind=[REDACTED]&urgency=[REDACTED]&summary=[REDACTED]&detail=[REDACTED]` +
        '&safetyAcknowledged=[REDACTED]&access_token=[REDACTED]',
    );
    const listed = await t.client.get(casesPath, { access_token: agent.token, view: 'full' }, traced('case-list'));
    expect(JSON.stringify(listed.body)).toContain(marker);
    await urlLoggedFor('case-list');
    expect(written.join('\n')).not.toContain(marker);
  });

  it('keeps the values of public read filters, so operators can tell reads apart', async () => {
    await t.client.get('/api/forum/posts', { projectSlug: 'no-such-project', limit: '5' }, traced('public-read'));
    expect(await urlLoggedFor('public-read')).toBe('/api/forum/posts?projectSlug=no-such-project&limit=5');
  });
});
