import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAgent, secondToken } from '../../../support/client.ts';
import { EventStreamReader } from '../../../support/eventStream.ts';
import { scrapeMetrics } from '../../../support/metrics.ts';
import { startServiceProcess, type ServiceProcess } from '../../../support/serviceProcess.ts';
import { rotateKey } from '../../../support/signedActions.ts';
import { startTestApp, useTestApp, type TestApp } from '../../../support/testApp.ts';

const OPERATOR_TOKEN = 'operator-token-for-stream-lifecycle';
// Instance A: API and workers. Instance B: a second API on the same Redis and Postgres.
// RATE_LIMIT_SCALE 1: the contract's four streams per agent.
const a = useTestApp({ OPERATOR_TOKEN, RATE_LIMIT_SCALE: '1' });
let b: TestApp;

beforeAll(async () => {
  b = await startTestApp({ OPERATOR_TOKEN, RATE_LIMIT_SCALE: '1', REDIS_PREFIX: a.settings.redisPrefix }, ['api']);
});
afterAll(async () => {
  await b?.stop();
});

const openStreams = async (t: TestApp) =>
  Number(
    (await scrapeMetrics(t))
      .split('\n')
      .find((line) => line.startsWith('agora_event_streams_open '))
      ?.split(' ')[1],
  );
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const open = (t: TestApp, token: string) => EventStreamReader.open(t.client.base, { since: 'now' }, bearer(token));
const attempt = async (base: string, token: string) => {
  const opened = await EventStreamReader.connect(base, { since: 'now' }, bearer(token));
  if (opened instanceof EventStreamReader) opened.close();
  return opened instanceof EventStreamReader ? 200 : opened.status;
};

/** Writes a stream request and closes the socket at once: the server is still authenticating when the client is gone. */
async function hangUpDuringSetup(base: string, token: string): Promise<void> {
  const { hostname, port } = new URL(base);
  await new Promise<void>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `GET /api/forum/events/stream?since=now HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`,
        () => {
          socket.destroy();
          resolve();
        },
      );
    });
    socket.on('error', reject);
  });
}

/** A stream on a plain socket, open once its first message arrived; `closed` resolves with the time the server closed the connection. */
async function streamOnSocket(base: string, token: string): Promise<{ closed: Promise<number>; destroy(): void }> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      if (chunk.includes('retry:')) resolve();
    });
    socket.write(
      `GET /api/forum/events/stream?since=now HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`,
    );
  });
  return { closed, destroy: () => socket.destroy() };
}

describe('an event stream’s slot, registry entry and fan-out subscription', () => {
  it('are all released when the client hangs up during setup: after forty hang-ups four streams open and the gauge returns to zero', async () => {
    const agent = await registerAgent(a.client);
    for (let i = 0; i < 40; i++) await hangUpDuringSetup(a.client.base, agent.token);
    await expect.poll(() => openStreams(a), { timeout: 10_000 }).toBe(0);
    const streams = [];
    for (let i = 0; i < 4; i++) streams.push(await open(a, agent.token));
    expect(await openStreams(a)).toBe(4);
    for (const stream of streams) stream.close();
    await expect.poll(() => openStreams(a), { timeout: 10_000 }).toBe(0);
  });
});

describe('a revoked token’s streams', () => {
  it('end on every API instance within a second of the revocation, connection closed, with a last comment saying why', async () => {
    const agent = await registerAgent(a.client);
    const stolen = await secondToken(a.client, agent);
    const here = await open(a, stolen.token);
    const there = await open(b, stolen.token);
    const kept = await open(b, agent.token);
    const socketThere = await streamOnSocket(b.client.base, stolen.token);
    try {
      const asked = Date.now();
      const revoked = await a.client.post('/api/forum/tokens', { action: 'revoke', tokenId: stolen.tokenId }, { token: agent.token });
      expect(revoked.status).toBe(200);
      // From the moment the revocation was asked for, its own command included, to the connection's close on the other instance.
      expect((await socketThere.closed) - asked).toBeLessThan(1000);
      await Promise.all([here.closedByServer(1000), there.closedByServer(1000)]);
      expect(here.comments).toBeGreaterThan(0);
      expect(there.comments).toBeGreaterThan(0);
      expect(kept.ended).toBe(false);
      expect(await attempt(b.client.base, stolen.token)).toBe(401);
    } finally {
      for (const stream of [here, there, kept]) stream.close();
      socketThere.destroy();
    }
  });

  it('end when revoke-others keeps only the token that asked', async () => {
    const agent = await registerAgent(a.client);
    const other = await secondToken(a.client, agent);
    const theirs = await open(b, other.token);
    const mine = await open(b, agent.token);
    try {
      expect((await a.client.post('/api/forum/tokens', { action: 'revoke-others' }, { token: agent.token })).status).toBe(200);
      await theirs.closedByServer(5000);
      expect(mine.ended).toBe(false);
    } finally {
      theirs.close();
      mine.close();
    }
  });

  it('end when a key rotation revokes the agent’s tokens, and go on when it keeps them', async () => {
    const keeping = await registerAgent(a.client);
    const keptStream = await open(b, keeping.token);
    const revoking = await registerAgent(a.client);
    const revokedStream = await open(b, revoking.token);
    try {
      await rotateKey(a.client, keeping);
      await rotateKey(a.client, revoking, { revokeTokens: 'true' });
      // The kept token's credential changed too, announced alike and checked first: by the time the later
      // revocation ends its stream, the kept one was left open.
      await revokedStream.closedByServer(5000);
      expect(keptStream.ended).toBe(false);
    } finally {
      keptStream.close();
      revokedStream.close();
    }
  });
});

describe('the per-agent stream limit', () => {
  it('counts the streams an agent holds on every instance together', async () => {
    const agent = await registerAgent(a.client);
    const streams = [await open(a, agent.token), await open(a, agent.token), await open(b, agent.token), await open(b, agent.token)];
    try {
      expect(await attempt(b.client.base, agent.token)).toBe(429);
      expect(await attempt(a.client.base, agent.token)).toBe(429);
      streams[0]?.close();
      await expect.poll(() => attempt(b.client.base, agent.token), { timeout: 10_000 }).toBe(200);
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  it('stops counting the streams of an instance that died, within seconds', async () => {
    const agent = await registerAgent(a.client);
    let doomed: ServiceProcess | null = await startServiceProcess('src/bin/main.ts', ['api'], {
      RATE_LIMIT_SCALE: '1',
      REDIS_PREFIX: a.settings.redisPrefix,
      DATABASE_URL: a.settings.databaseUrl,
    });
    try {
      const base = doomed.client.base;
      for (let i = 0; i < 4; i++) await EventStreamReader.open(base, { since: 'now' }, bearer(agent.token));
      expect(await attempt(a.client.base, agent.token)).toBe(429);
      doomed.child.kill('SIGKILL');
      doomed = null;
      await expect.poll(() => attempt(a.client.base, agent.token), { timeout: 15_000, interval: 500 }).toBe(200);
    } finally {
      if (doomed) await doomed.stop();
    }
  });
});
