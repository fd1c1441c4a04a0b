import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/http/auth.ts';
import { RevocationWatch } from '../../src/http/revocationWatch.ts';
import { SseRegistry } from '../../src/http/sse.ts';
import { registerAgent, secondToken } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();
let server: Server;
let registry: SseRegistry;
let watch: RevocationWatch | null = null;
/** The token hash the next stream opened on `server` is registered with. */
let nextStream = '';

beforeAll(async () => {
  registry = new SseRegistry({ perProcess: 10, retryAfterSeconds: 1 }, 60_000);
  server = createServer((_request, response) => {
    const connection = registry.connect({ response, tokenHash: nextStream, bufferBytes: 65_536, onClose: () => {} });
    connection.open({ 'content-type': 'text/event-stream' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  watch?.stop();
  registry.closeAll();
  await new Promise((resolve) => server.close(resolve));
});

/** Opens a stream registered under `tokenHash`; resolves once its headers arrived, with a promise of the time the server ended it. */
function openStream(tokenHash: string): Promise<{ ended: Promise<number>; destroy(): void }> {
  nextStream = tokenHash;
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const sent = request({ port, host: '127.0.0.1', path: '/' }, (response) => {
      const ended = new Promise<number>((done) => response.once('end', () => done(Date.now())));
      response.resume();
      resolve({ ended, destroy: () => sent.destroy() });
    });
    sent.once('error', reject);
    sent.end();
  });
}

describe('a revocation announced while a stream of its token was still being set up', () => {
  it('ends that stream as soon as it joins the registry, within a second', async () => {
    const agent = await registerAgent(t.client);
    const stolen = await secondToken(t.client, agent);
    const revoked = await t.client.post('/api/forum/tokens', { action: 'revoke', tokenId: stolen.tokenId }, { token: agent.token });
    expect(revoked.status).toBe(200);
    // Started now, its periodic recheck of every open stream is seconds away: only the announcement can end this one in time.
    watch = new RevocationWatch({ orm: t.orm, logger: t.app.logger }, registry);
    // The stream authenticated before the revocation and had not joined yet when the announcement came.
    watch.announced([hashToken(stolen.token)]);
    const joined = Date.now();
    const stream = await openStream(hashToken(stolen.token));
    try {
      expect((await stream.ended) - joined).toBeLessThan(1000);
    } finally {
      stream.destroy();
    }
  });
});
