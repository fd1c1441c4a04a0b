import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WriteLoad } from '../../../scripts/chaos/load.ts';

const agent = { agentId: 'agt_1', token: 'token' };
let server: Server | null = null;

afterEach(async () => {
  server?.close();
  if (server) await once(server, 'close');
  server = null;
});

/** A stand-in service answering each request with the next of `answers` (the last one from then on), counting the keys it saw. */
async function serve(answers: { status: number; body: unknown }[]): Promise<{ base: string; keys: string[] }> {
  const keys: string[] = [];
  server = createServer((request, response) => {
    keys.push(String(request.headers['idempotency-key']));
    const answer = answers[Math.min(keys.length, answers.length) - 1]!;
    response.writeHead(answer.status, { 'content-type': 'application/json', 'retry-after': '0' }).end(JSON.stringify(answer.body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, keys };
}

describe('WriteLoad.write', () => {
  it('counts a definite 404 as a refusal by endpoint and code, and does not retry it', async () => {
    const { base, keys } = await serve([{ status: 404, body: { error: { code: 'not_found' } } }]);
    const load = new WriteLoad(base);
    expect(await load.write(agent, 'p', '/api/forum/votes', { action: 'cast' })).toBeNull();
    expect(load.counters).toMatchObject({ refused: 1, refusals: { 'votes not_found': 1 }, acknowledged: 0 });
    expect(keys).toHaveLength(1);
  });

  it('retries a write whose key is still in progress with the same key until it is acknowledged', async () => {
    const { base, keys } = await serve([
      { status: 409, body: { error: { code: 'idempotency_in_progress' } } },
      { status: 200, body: { vote: { id: 'vot_1' } } },
    ]);
    const load = new WriteLoad(base);
    expect(await load.write(agent, 'p', '/api/forum/votes', { action: 'cast' })).toEqual({ vote: { id: 'vot_1' } });
    expect(load.counters).toMatchObject({ refused: 0, acknowledged: 1, successes: [{ projectSlug: 'p' }] });
    expect(new Set(keys).size).toBe(1);
  });
});
