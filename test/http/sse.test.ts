import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ledgerHead } from '../../src/ledger/publisher.ts';
import { registerAgent } from '../support/client.ts';
import { EventStreamReader } from '../support/eventStream.ts';
import { sample, scrapeMetrics } from '../support/metrics.ts';
import { useTestApp, type TestApp } from '../support/testApp.ts';

const OPERATOR_TOKEN = 'operator-token-for-stream-tests';
/** RATE_LIMIT_SCALE 0.5: two streams per agent or source address; three per process. */
const limited = useTestApp({ RATE_LIMIT_SCALE: '0.5', STREAM_MAX_PER_PROCESS: '3', OPERATOR_TOKEN });
/** The smallest stream buffer, so a client that stops reading is cut early. */
const small = useTestApp({ STREAM_BUFFER_BYTES: '65536', OPERATOR_TOKEN });

/** Streams still open on the app: a client's close reaches the server a moment later. */
const openStreams = async (t: TestApp) =>
  Number(
    (await scrapeMetrics(t))
      .split('\n')
      .find((line) => line.startsWith('agora_event_streams_open '))
      ?.split(' ')[1],
  );

const open = (t: TestApp, query: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  EventStreamReader.open(t.client.base, query, headers);

describe('event stream limits', () => {
  it('refuses a third concurrent stream of one agent with 429, Retry-After and the rate headers, and takes it once one closes', async () => {
    await expect.poll(() => openStreams(limited), { timeout: 10_000 }).toBe(0);
    const agent = await registerAgent(limited.client);
    const auth = { authorization: `Bearer ${agent.token}` };
    const first = await open(limited, {}, auth);
    const second = await open(limited, {}, auth);
    try {
      const refused = await limited.client.get('/api/forum/events/stream', {}, { token: agent.token });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ ok: false, error: { code: 'rate_limited' } });
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.headers.get('ratelimit-limit')).toBe('2');
      expect(refused.headers.get('ratelimit-remaining')).toBe('0');
      first.close();
      await expect
        .poll(
          async () => {
            const again = await EventStreamReader.connect(limited.client.base, {}, auth);
            if (again instanceof EventStreamReader) again.close();
            return again instanceof EventStreamReader;
          },
          { timeout: 10_000 },
        )
        .toBe(true);
    } finally {
      first.close();
      second.close();
    }
  });

  it('limits anonymous streams per source address', async () => {
    await expect.poll(() => openStreams(limited), { timeout: 10_000 }).toBe(0);
    const streams = [await open(limited), await open(limited)];
    try {
      const refused = await limited.client.get('/api/forum/events/stream');
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  it('refuses streams past the per-process limit with 429 whoever asks', async () => {
    await expect.poll(() => openStreams(limited), { timeout: 10_000 }).toBe(0);
    const [a, b] = [await registerAgent(limited.client), await registerAgent(limited.client)];
    const streams = [
      await open(limited, {}, { authorization: `Bearer ${a.token}` }),
      await open(limited, {}, { authorization: `Bearer ${b.token}` }),
      await open(limited),
    ];
    try {
      const c = await registerAgent(limited.client);
      const refused = await limited.client.get('/api/forum/events/stream', {}, { token: c.token });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});

describe('slow event stream consumers', () => {
  it('cuts a client that stops reading once its buffer is full; it resumes from its last id with nothing missed', {
    timeout: 120_000,
  }, async () => {
    const since = await ledgerHead(small.orm.em.fork());
    const slow = await open(small, { since, view: 'full' });
    slow.pause();
    // Outbox rows of 2 KB each, as commands write them, published by the workers as usual: more of them until the
    // sockets' kernel buffers are full and then the stream's 64 KB (the kernel's share varies with its autotuning).
    const cut = async () => sample(await scrapeMetrics(small), 'agora_event_streams_closed_total', 'reason="slow"');
    for (let round = 0; (await cut()) === 0; round++) {
      if (round === 20) throw new Error('the client that stopped reading was never cut');
      await small.orm.em.fork().execute(
        `insert into outbox_event (type, data, command_id, created_at)
           select 'test.filled', jsonb_build_object('filler', repeat('x', 2000)), 'filler-' || gen_random_uuid(), now() from generate_series(1, 2000)`,
      );
      await expect
        .poll(
          async () =>
            (
              await small.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from outbox_event where published_at is null')
            )[0]?.n,
          { timeout: 20_000 },
        )
        .toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    slow.resume();
    await slow.closedByServer();
    const head = await ledgerHead(small.orm.em.fork());
    expect(BigInt(slow.lastId ?? since)).toBeLessThan(BigInt(head));
    const resumed = await open(small, { view: 'full' }, { 'last-event-id': slow.lastId ?? since });
    try {
      // Other test files write to the same ledger meanwhile: the stream may go past the head read here.
      await resumed.until(() => BigInt(resumed.lastId ?? since) >= BigInt(head), 30_000);
      const ids = [...slow.ids(), ...resumed.ids()].map(BigInt).filter((id) => id <= BigInt(head));
      // The ledger after since, every id once, ascending.
      expect(ids).toEqual(Array.from({ length: Number(BigInt(head) - BigInt(since)) }, (_, i) => BigInt(since) + BigInt(i + 1)));
    } finally {
      resumed.close();
    }
  });
});

/** What a raw HTTP request to the stream gets back (headers and body as sent), up to the end of the first message. */
async function rawStream(t: TestApp, requestLine: string): Promise<string> {
  const url = new URL(t.client.base);
  const socket = connect(Number(url.port), url.hostname);
  try {
    socket.write(`${requestLine}\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`);
    let received = '';
    for await (const chunk of socket) {
      received += (chunk as Buffer).toString('latin1');
      if (/retry: 1000\n\n(\r\n)?/.test(received) && received.endsWith('\n')) return received;
    }
    return received;
  } finally {
    socket.destroy();
  }
}

describe('event stream framing', () => {
  it('frames each message as one chunk of a chunked HTTP/1.1 response', async () => {
    const received = await rawStream(small, 'GET /api/forum/events/stream?since=now HTTP/1.1');
    const [head] = received.split('\r\n\r\n', 1) as [string];
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
    // 'retry: 1000\n\n' is 13 bytes: d in hex.
    expect(received.slice(head.length + 4)).toBe('d\r\nretry: 1000\n\n\r\n');
  });

  it('sends the messages unframed, delimited by the connection, to an HTTP/1.0 client', async () => {
    const received = await rawStream(small, 'GET /api/forum/events/stream?since=now HTTP/1.0');
    const [head] = received.split('\r\n\r\n', 1) as [string];
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.toLowerCase()).not.toContain('transfer-encoding');
    expect(received.slice(head.length + 4)).toBe('retry: 1000\n\n');
  });
});

describe('event stream HEAD', () => {
  it('answers HEAD with the stream headers and no body', async () => {
    const url = new URL(small.client.base);
    const socket = connect(Number(url.port), url.hostname);
    try {
      socket.write(`HEAD /api/forum/events/stream?since=now HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`);
      let received = '';
      for await (const chunk of socket) received += (chunk as Buffer).toString('latin1');
      const [head, ...rest] = received.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 200/);
      expect(head?.toLowerCase()).toContain('content-type: text/event-stream');
      expect(rest.join('')).toBe('');
    } finally {
      socket.destroy();
    }
  });
});
