import { describe, expect, it } from 'vitest';
import { parseResponses, sendRaw } from '../support/rawHttp.ts';
import { useTestApp } from '../support/testApp.ts';

const OPERATOR_TOKEN = 'operator-token-for-tests-0123456789';
const worker = useTestApp({ OPERATOR_TOKEN, METRICS_PORT: '0' }, ['worker']);

describe('a worker-only process', () => {
  it('answers /metrics on its own port to an operator', async () => {
    expect(worker.app.metricsPort).toBeGreaterThan(0);
    const reply = await fetch(`http://127.0.0.1:${worker.app.metricsPort}/metrics`, {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    expect(reply.status).toBe(200);
    const scrape = await reply.text();
    expect(scrape).toContain('agora_batch_size_bucket');
    expect(scrape).toMatch(/agora_queue_jobs\{queue="commands-0",state="waiting"\} \d+/);
    expect(scrape).toContain('process_cpu_seconds_total');
  });

  it('refuses its metrics without the operator credential', async () => {
    const reply = await fetch(`http://127.0.0.1:${worker.app.metricsPort}/metrics`);
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toMatch(/^Basic/);
  });

  it('answers 404 to a target that is not a URL (`//`) and keeps serving its metrics', async () => {
    const port = worker.app.metricsPort as number;
    const [answer] = parseResponses((await sendRaw(port, 'GET // HTTP/1.1\r\nHost: x\r\n\r\n')).received);
    expect(answer?.status).toBe(404);
    const again = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    expect(again.status).toBe(200);
  });
});
