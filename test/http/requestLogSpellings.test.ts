import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { registerAgent, type TestAgent } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const written: string[] = [];
const t = useTestApp({ LOG_LEVEL: 'info', ACCOUNTS_LINK_SECRET: 'accounts-link-test-secret-0123456789' }, undefined, {
  logDestination: { write: (line: string) => void written.push(line) },
});

/** The logged request line of a request id, once the response event has written it (bounded wait). */
async function lineLoggedFor(requestId: string): Promise<{ url: string; route: string | null }> {
  return vi.waitFor(
    () => {
      const line = written
        .map((text) => JSON.parse(text) as { requestId?: string; url?: string; route?: string | null })
        .find((entry) => entry.requestId === requestId && typeof entry.url === 'string');
      if (!line) throw new Error(`no request line for ${requestId}`);
      return { url: line.url as string, route: line.route ?? null };
    },
    { timeout: 5000, interval: 10 },
  );
}

/** A GET of the exact target (fetch keeps percent-encodings and doubled slashes as written). */
async function getRaw(target: string, agent: TestAgent, requestId: string): Promise<number> {
  const response = await fetch(`${t.client.base}${target}`, {
    headers: { authorization: `Bearer ${agent.token}`, 'x-request-id': requestId },
  });
  await response.arrayBuffer();
  return response.status;
}

const marker = () => `private-filter-${randomBytes(6).toString('hex')}`;

/** Each private read with the spellings of its path that hapi's router serves as that route. */
const spellings = {
  '/api/relay/cases': [
    '/api/rel%61y/cases',
    '/api/relay/cases/',
    '/api/relay/c%61ses',
    '/%61pi/relay/cases',
    '/api/relay%2Fcases',
    '/api//relay/cases',
    '/api/relay//cases',
  ],
  '/api/forum/account-links': [
    '/api/forum/account-link%73',
    '/api/forum/account-links/',
    '/api/forum/%61ccount-links',
    '/api/f%6Frum/account-links',
    '/api/forum//account-links',
  ],
};

describe('the request log of a private read, however its path is spelled', () => {
  for (const [route, variants] of Object.entries(spellings)) {
    for (const spelling of variants) {
      it(`redacts every query value of ${spelling} as it does for ${route}`, async () => {
        const agent = await registerAgent(t.client);
        const value = marker();
        const requestId = `spelling-${randomBytes(6).toString('hex')}`;
        const status = await getRaw(`${spelling}?status=${value}&kind=${value}`, agent, requestId);
        const line = await lineLoggedFor(requestId);
        expect(line.url).toBe(`${spelling}?status=[REDACTED]&kind=[REDACTED]`);
        expect(written.join('\n')).not.toContain(value);
        // The spellings the router serves are the ones this guards: those must reach the private route itself.
        if (status !== 404) expect(line.route).toBe(route);
      });
    }
  }

  it('routes the percent-encoded spelling to the private read, so the plain-path check alone would have logged it', async () => {
    const agent = await registerAgent(t.client);
    const requestId = `spelling-${randomBytes(6).toString('hex')}`;
    expect(await getRaw('/api/rel%61y/cases?status=open&kind=aid', agent, requestId)).toBe(200);
    expect((await lineLoggedFor(requestId)).route).toBe('/api/relay/cases');
  });

  it('still keeps the filter values of a public read', async () => {
    const agent = await registerAgent(t.client);
    const requestId = `spelling-${randomBytes(6).toString('hex')}`;
    expect(await getRaw('/api/forum/p%6Fsts?projectSlug=no-such-project&limit=5', agent, requestId)).toBe(200);
    expect((await lineLoggedFor(requestId)).url).toBe('/api/forum/p%6Fsts?projectSlug=no-such-project&limit=5');
  });
});
