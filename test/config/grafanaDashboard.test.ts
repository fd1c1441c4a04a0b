import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPost, newTopic } from '../support/forum.ts';
import { instantQuery, startHttpEngine, type HttpEngine } from '../support/prometheus.ts';
import { useTestApp } from '../support/testApp.ts';

const OPERATOR_TOKEN = 'operator-token-for-tests-0123456789';
const t = useTestApp({ OPERATOR_TOKEN });

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(readFileSync('config/grafana/agora.json', 'utf8')) as { panels: Panel[] };
const queries = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));

const dir = mkdtempSync(join(tmpdir(), 'agora-grafana-'));
const engines: HttpEngine[] = [];
let prometheus: HttpEngine;

/** Debian's exporters and Prometheus, each on a port of its own, scraping this file's app, its Redis and its database every second. */
beforeAll(async () => {
  const database = new URL(inject('databaseUrl'));
  database.searchParams.set('sslmode', 'disable');
  const redisExporter = await startHttpEngine(
    '/usr/bin/prometheus-redis-exporter',
    (port) => ['-redis.addr', t.settings.redisUrl, '-web.listen-address', `127.0.0.1:${port}`],
    '/metrics',
  );
  engines.push(redisExporter);
  const postgresExporter = await startHttpEngine(
    '/usr/bin/prometheus-postgres-exporter',
    (port) => [
      `--web.listen-address=127.0.0.1:${port}`,
      `--extend.query-path=${resolve('config/prometheus/postgres-exporter-queries.yaml')}`,
    ],
    '/metrics',
    { DATA_SOURCE_NAME: database.toString() },
  );
  engines.push(postgresExporter);
  writeFileSync(join(dir, 'operator-token'), OPERATOR_TOKEN);
  const api = new URL(t.client.base);
  writeFileSync(
    join(dir, 'prometheus.yml'),
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      scrape_configs: [
        {
          job_name: 'agora-api',
          authorization: { credentials_file: join(dir, 'operator-token') },
          static_configs: [{ targets: [api.host] }],
        },
        { job_name: 'redis', static_configs: [{ targets: [`127.0.0.1:${redisExporter.port}`] }] },
        { job_name: 'postgres', static_configs: [{ targets: [`127.0.0.1:${postgresExporter.port}`] }] },
      ],
    }),
  );
  prometheus = await startHttpEngine(
    '/usr/bin/prometheus',
    (port) => [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    '/-/ready',
  );
  engines.push(prometheus);
}, 120_000);

afterAll(async () => {
  await Promise.all(engines.map((engine) => engine.stop()));
  rmSync(dir, { recursive: true, force: true });
});

/** Queries that errored or found no series, with the reason. */
async function failingQueries(): Promise<string[]> {
  const answers = await Promise.all(queries.map(async (q) => ({ ...q, answer: await instantQuery(prometheus, q.expr) })));
  return answers
    .filter(({ answer }) => answer.status !== 'success' || (answer.data?.result.length ?? 0) === 0)
    .map(({ panel, expr, answer }) => `${panel}: ${expr}: ${answer.error ?? 'no series'}`);
}

describe('the Grafana dashboard', () => {
  it('has a query on every panel but its rows', () => {
    for (const panel of dashboard.panels) if (panel.type !== 'row') expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0);
    expect(queries.length).toBeGreaterThanOrEqual(20);
  });

  it('answers every panel query with series on a real Prometheus after a load run', async () => {
    const topic = await newTopic(t.client);
    for (let i = 0; i < 20; i++) {
      const post = await createPost(t.client, topic.owner, topic);
      expect((await t.client.get('/api/forum/posts', { rootPostId: post.id })).status).toBe(200);
    }
    // Rates need two scrapes after the load; the panels' series appear within a few seconds of scraping every second.
    const deadline = Date.now() + 60_000;
    let failing = await failingQueries();
    while (failing.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      failing = await failingQueries();
    }
    expect(failing, engines.map((engine) => engine.output()).join('\n')).toEqual([]);
  }, 120_000);
});
