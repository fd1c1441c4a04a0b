import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OwnRedis } from '../../scripts/chaos/services.ts';
import { startOwnRedis } from '../../scripts/chaos/services.ts';
import { sample, scrapeMetrics } from '../support/metrics.ts';
import { until } from '../support/until.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let redis: OwnRedis;
let t: TestApp;
beforeAll(async () => {
  redis = await startOwnRedis();
  t = await startTestApp({ REDIS_URL: redis.url, OPERATOR_TOKEN: 'operator-token-for-tests-0123456789' });
}, 60_000);
afterAll(async () => {
  // Back if the test stopped it and failed before starting it again, so the app stops cleanly.
  await redis.start();
  await t?.stop();
  await redis.stop();
  redis.cleanUp();
}, 60_000);

describe('metrics during a Redis outage', () => {
  it('answers the scrape without the series read from the queues, counts the failed reads, and has them back after', async () => {
    const before = await scrapeMetrics(t);
    expect(before).toContain('agora_project_commands_waiting{project="(other)"} 0');
    await redis.stop();
    const during = await scrapeMetrics(t);
    expect(during).toContain('agora_http_requests_total{');
    expect(during).not.toMatch(/^agora_project_commands_waiting\{/m);
    expect(during).not.toMatch(/^agora_queue_jobs\{/m);
    expect(sample(during, 'agora_metrics_source_failures_total', 'source="project_backlog"')).toBeGreaterThanOrEqual(1);
    await redis.start();
    let after = '';
    await until(
      async () => (after = await scrapeMetrics(t)).includes('agora_project_commands_waiting{'),
      30_000,
      'the queue-derived series after Redis is back',
    );
    expect(after).toContain('agora_project_commands_waiting{project="(other)"} 0');
    expect(after).toMatch(/^agora_queue_jobs\{queue="commands-0",state="waiting"\} 0$/m);
  }, 60_000);
});
