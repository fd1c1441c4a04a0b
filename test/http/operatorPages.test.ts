import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectKey } from '../../src/pipeline/batchName.ts';
import { partitionOf } from '../../src/pipeline/partitions.ts';
import { createPost, newTopic, type TestTopic } from '../support/forum.ts';
import { sample, scrapeMetrics } from '../support/metrics.ts';
import { queuesIdle } from '../support/queues.ts';
import { until } from '../support/until.ts';
import { failCommandOf, holdProjects } from '../support/stuckProjects.ts';
import { useTestApp } from '../support/testApp.ts';

const OPERATOR_TOKEN = 'operator-token-for-tests-0123456789';
// Posts to a held project wait for the release within COMMAND_TIMEOUT_MS.
const t = useTestApp({ OPERATOR_TOKEN, COMMAND_TIMEOUT_MS: '60000' });

/** Debian's Chromium; .ci/run installs it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** `UPDATE_SCREENSHOTS=1 npx vitest run test/http/operatorPages.test.ts` refreshes the pictures in docs/operations.md. */
const screenshotDir = process.env.UPDATE_SCREENSHOTS ? 'docs' : tmpdir();

let browser: Browser;
beforeAll(async () => {
  expect(existsSync(CHROMIUM), `Chromium at ${CHROMIUM}`).toBe(true);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

async function operatorPage(password = OPERATOR_TOKEN) {
  const context = await browser.newContext({ httpCredentials: { username: 'operator', password }, viewport: { width: 1280, height: 720 } });
  return context.newPage();
}

const postTo = (topic: TestTopic) =>
  t.client.post(
    '/api/forum/posts',
    { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: 'a body only its readers see' },
    { token: topic.owner.token },
  );

async function screenshot(page: Awaited<ReturnType<typeof operatorPage>>, name: string): Promise<void> {
  await mkdir(screenshotDir, { recursive: true });
  const path = join(screenshotDir, name);
  await page.screenshot({ path, fullPage: true });
  expect((await stat(path)).size).toBeGreaterThan(10_000);
}

describe('per-project pages in a real browser', () => {
  it('lists a stuck project first with its waiting commands, partition and worker, and its page shows its commands and a failure', async () => {
    const [stuck, busy] = [await newTopic(t.client), await newTopic(t.client)] as [TestTopic, TestTopic];
    for (let i = 0; i < 3; i++) await createPost(t.client, busy.owner, busy);
    await createPost(t.client, stuck.owner, stuck);
    await failCommandOf(t, stuck.projectSlug, 'crashing-command-7');
    const release = await holdProjects(t, [stuck.projectSlug]);
    const replies = Promise.all([postTo(stuck), postTo(stuck), postTo(stuck), postTo(stuck)]);
    try {
      await until(
        async () => sample(await scrapeMetrics(t), 'agora_project_commands_waiting', `project="${stuck.projectSlug}"`) === 4,
        30_000,
        'four commands of the held project waiting',
      );
      const page = await operatorPage();
      expect((await page.goto(`${t.client.base}/admin/projects`))?.status()).toBe(200);
      const rows = page.locator('tbody tr');
      const first = rows.first();
      await expect(first.locator('td').nth(0).textContent()).resolves.toBe(stuck.projectSlug);
      await expect(first.locator('td').nth(1).textContent()).resolves.toBe('4');
      await expect(first.locator('td').nth(3).textContent()).resolves.toBe('1');
      await expect(first.locator('td').nth(5).textContent()).resolves.toBe(
        `commands-${partitionOf(projectKey(stuck.projectSlug), t.settings.partitions)}`,
      );
      // Its first command holds the partition: a worker has it, waiting on the project's lock.
      await expect(first.locator('td').nth(6).textContent()).resolves.not.toBe('idle');
      const busyRow = rows.filter({ hasText: busy.projectSlug });
      // Its project, its topic and three posts.
      await expect(busyRow.locator('td').nth(4).textContent()).resolves.toBe('5');
      await screenshot(page, 'operator-projects.png');

      await first.getByRole('link', { name: stuck.projectSlug }).click();
      await page.getByRole('heading', { name: 'Recent commands' }).waitFor();
      expect(page.url()).toBe(`${t.client.base}/admin/projects/${stuck.projectSlug}`);
      const recent = page.locator('table').first().locator('tbody tr');
      // Four held (one active, three waiting), the failed one, and the project, topic and post applied before.
      await expect(recent.count()).resolves.toBe(8);
      await expect(recent.filter({ hasText: 'waiting' }).count()).resolves.toBe(3);
      await expect(recent.filter({ hasText: 'active' }).count()).resolves.toBe(1);
      await expect(recent.filter({ hasText: 'completed' }).count()).resolves.toBe(3);
      const failure = page.locator('table').nth(1).locator('tbody tr');
      await expect(failure.count()).resolves.toBe(1);
      await expect(failure.first().textContent()).resolves.toContain('crashing-command-7');
      await expect(failure.first().textContent()).resolves.toContain('failed on every attempt');
      await expect(page.content()).resolves.not.toContain('a body only its readers see');
      await screenshot(page, 'operator-project.png');
    } finally {
      await release();
    }
    expect((await replies).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    await until(() => queuesIdle(t.redis, t.settings), 20_000, 'the held commands to be applied');
  }, 90_000);

  it('refuses the project pages to a browser whose operator password is wrong', async () => {
    const page = await operatorPage('a-wrong-password-000000');
    for (const path of ['/admin/projects', '/admin/projects/alpha']) {
      const response = await page.goto(`${t.client.base}${path}`);
      expect(response?.status(), path).toBe(401);
      expect(await page.content()).toContain('unauthenticated');
    }
  });

  it('answers 404 with the error body for a name that cannot be a project', async () => {
    const reply = await fetch(`${t.client.base}/admin/projects/${encodeURIComponent('<script>')}`, {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    expect(reply.status).toBe(404);
    expect(await reply.json()).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });
});
