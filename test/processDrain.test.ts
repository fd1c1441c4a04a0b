import { describe, expect, it } from 'vitest';
import { Project } from '../src/entities/project.ts';
import { registerAgent, unique } from './support/client.ts';
import { startServiceProcess } from './support/serviceProcess.ts';
import { until } from './support/until.ts';
import { useTestApp } from './support/testApp.ts';

const t = useTestApp();
// The grace is what lets writes still queued in the kernel be read and answered: on a loaded machine the
// process takes far more than a few hundred milliseconds to read them (300 ms failed at a load average of 20).
const GRACE_MS = 2000;
const WRITES = 10;

/**
 * One drain: ten writes in flight, SIGTERM `delayMs` after they were sent.
 * Every write must be answered 200, and exactly the answered ones applied.
 */
async function drainRound(delayMs: number): Promise<{ answered: number; applied: number; code: number | null }> {
  const service = await startServiceProcess('src/bin/main.ts', ['all'], { DRAIN_GRACE_MS: String(GRACE_MS) });
  const agent = await registerAgent(service.client);
  const slugs = Array.from({ length: WRITES }, () => unique('drain-'));
  const inFlight = slugs.map((slug) =>
    service.client.post('/api/forum/projects', { action: 'create', slug, name: 'Drain' }, { token: agent.token }),
  );
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  const code = service.stop();
  const replies = await Promise.all(inFlight);
  const answered = replies.filter((reply) => reply.status === 200).length;
  const applied = await t.orm.em.fork().count(Project, { slug: { $in: slugs } });
  return { answered, applied, code: await code };
}

describe('draining on SIGTERM', () => {
  it('answers every one of ten in-flight writes and applies exactly those, whatever the delay (0-50 ms) between the writes and the signal', async () => {
    // Six points across the range (ten cost a fifth of the suite's process starts for no failure the six miss).
    const delays = [0, 5, 15, 30, 40, 50];
    const rounds = [];
    // Two processes at a time: the rounds are independent and a 2-core machine fits two.
    for (let i = 0; i < delays.length; i += 2) rounds.push(...(await Promise.all(delays.slice(i, i + 2).map(drainRound))));
    expect(rounds).toEqual(delays.map(() => ({ answered: WRITES, applied: WRITES, code: 0 })));
  }, 300_000);

  it('answers /readyz 503 with Retry-After as soon as it is told to stop, while it still serves requests', async () => {
    const service = await startServiceProcess('src/bin/main.ts', ['all'], { DRAIN_GRACE_MS: '3000' });
    expect((await service.client.get('/readyz')).status).toBe(200);
    const exited = service.stop();
    // The process logs "draining" when it handles the signal; the first probe after that line must already be 503.
    await until(() => service.output.some((line) => line.includes('"msg":"draining"')), 10_000, 'the process to handle SIGTERM');
    const ready = await service.client.get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('2');
    expect(ready.headers.get('connection')).toBe('close');
    expect((await service.client.get('/healthz')).status).toBe(200);
    expect(await exited).toBe(0);
  }, 30_000);
});
