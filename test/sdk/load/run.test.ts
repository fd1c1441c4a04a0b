import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../support/until.ts';
import { startTestApp, type TestApp } from '../../support/testApp.ts';

const bin = join(import.meta.dirname, '..', '..', '..', 'sdk', 'bin', 'agora.ts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** `UPDATE_SCREENSHOTS=1 npx vitest run test/sdk/load/run.test.ts` runs 30 s at 10/s instead of 4 s at 15/s and refreshes docs/load-report.png. */
const picture = Boolean(process.env.UPDATE_SCREENSHOTS);

let t: TestApp;
let dir: string;

function agora(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { timeout: 180_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  t = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'agora-load-'));
});
afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
});

interface Summary {
  totals: { arrivals: number; ok: number; rateLimited: number; errors: number; dropped: number; paced: number };
  statuses: Record<string, number>;
  responseTime: { count: number; p50: number; p99: number };
  operations: Record<string, { count: number }>;
  streams: { eventsReceived: number; failed: number };
  timeline: { t: number; completed: number }[];
}

/** post.created events of one project on the ledger: the posts the service applied. */
async function postsApplied(projectSlug: string): Promise<number> {
  let count = 0;
  let since = '0';
  for (;;) {
    const page = await t.client.get('/api/forum/events', { projectSlug, type: 'post.created', since, limit: '100' });
    const events = page.body.events as { eventId: string }[];
    count += events.length;
    if (events.length < 100) return count;
    since = events.at(-1)!.eventId;
  }
}

describe('agora load', () => {
  it('drives a mix at a fixed arrival rate, applies each write once, and writes a report a browser draws', {
    timeout: 900_000,
  }, async () => {
    const report = join(dir, 'report');
    const world = join(dir, 'world.json');
    const [rate, duration] = picture ? ['10', '30'] : ['15', '4'];
    const url = t.app.server?.info.uri ?? '';
    const run = await agora(
      '--json',
      'load',
      url,
      '--rate',
      rate,
      '--duration',
      duration,
      '--agents',
      '6',
      '--projects',
      '3',
      '--hot',
      '0.5',
      '--streams',
      '2',
      '--report',
      report,
      '--world',
      world,
    );
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(run.stderr).toMatch(/^ +1s +\d+\/s +ok \d+/m);
    const summary = JSON.parse(await readFile(join(report, 'summary.json'), 'utf8')) as Summary;
    expect(summary.totals.arrivals).toBe(Number(rate) * Number(duration));
    expect({ errors: summary.totals.errors, dropped: summary.totals.dropped }, `statuses ${JSON.stringify(summary.statuses)}`).toEqual({
      errors: 0,
      dropped: 0,
    });
    expect(summary.totals.ok + summary.totals.rateLimited + summary.totals.paced).toBe(summary.totals.arrivals);
    expect(summary.responseTime.count).toBe(summary.totals.ok + summary.totals.rateLimited);
    expect(summary.timeline.reduce((n, s) => n + s.completed, 0)).toBe(summary.responseTime.count);
    expect(Object.keys(summary.operations).sort()).toEqual(['events', 'feed', 'follow', 'post', 'reply', 'vote']);
    expect({ streamEvents: summary.streams.eventsReceived > 0, failed: summary.streams.failed }).toEqual({ streamEvents: true, failed: 0 });

    // Every write's retry key is kept, each once; every post answered 200 is on the ledger exactly once.
    const writes = (await readFile(join(report, 'writes.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { op: string; retryKey: string; status: number });
    expect(new Set(writes.map((w) => w.retryKey)).size).toBe(writes.length);
    const posted = writes.filter((w) => (w.op === 'post' || w.op === 'reply') && w.status === 200).length;
    const { projects } = JSON.parse(await readFile(world, 'utf8')) as { projects: { projectSlug: string }[] };
    let applied = 0;
    await until(
      async () => {
        applied = (await Promise.all(projects.map((p) => postsApplied(p.projectSlug)))).reduce((a, b) => a + b, 0);
        return applied >= posted;
      },
      30_000,
      'the load’s posts on the ledger',
    );
    expect(applied).toBe(posted);

    expect(existsSync(CHROMIUM), `Chromium at ${CHROMIUM}`).toBe(true);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const page = await (await browser.newContext({ viewport: { width: 940, height: 900 } })).newPage();
      await page.goto(`file://${join(report, 'report.html')}`);
      await expect(page.locator('figure svg polyline').count()).resolves.toBe(7);
      await expect(page.locator('tbody tr').count()).resolves.toBe(6);
      const shots = picture ? 'docs' : dir;
      await mkdir(shots, { recursive: true });
      const path = join(shots, 'load-report.png');
      await page.screenshot({ path, fullPage: true });
      expect((await stat(path)).size).toBeGreaterThan(20_000);
    } finally {
      await browser.close();
    }
  });

  it('refuses to run against a host that does not answer as Agora', async () => {
    const impostor: Server = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
    );
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = impostor.address() as { port: number };
      const run = await agora('load', `http://127.0.0.1:${port}`, '--duration', '1', '--report', join(dir, 'impostor'));
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/does not answer as Agora .*refuses to run/);
      expect(existsSync(join(dir, 'impostor'))).toBe(false);
    } finally {
      impostor.close();
    }
  });
});
