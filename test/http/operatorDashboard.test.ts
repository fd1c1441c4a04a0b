import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createPost, newTopic } from '../support/forum.ts';
import { useTestApp } from '../support/testApp.ts';

const OPERATOR_TOKEN = 'operator-token-for-tests-0123456789';
const t = useTestApp({ OPERATOR_TOKEN });

/** Debian's Chromium (`apt-get install chromium`); .ci/run installs it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** `UPDATE_SCREENSHOTS=1 npx vitest run test/http/operatorDashboard.test.ts` refreshes the README's picture. */
const screenshotDir = process.env.UPDATE_SCREENSHOTS ? 'docs' : tmpdir();

describe('queue dashboard in a real browser', () => {
  it('renders every partition queue for an operator who signs in with HTTP Basic', async () => {
    expect(existsSync(CHROMIUM), `Chromium at ${CHROMIUM}`).toBe(true);
    const topic = await newTopic(t.client);
    for (let i = 0; i < 3; i++) await createPost(t.client, topic.owner, topic);

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const context = await browser.newContext({
        httpCredentials: { username: 'operator', password: OPERATOR_TOKEN },
        viewport: { width: 1280, height: 800 },
      });
      const page = await context.newPage();
      const response = await page.goto(`${t.client.base}/admin/queues`);
      expect(response?.status()).toBe(200);
      await expect(page.title()).resolves.toBe('Agora queues');
      // The board fetches its queue list from its JSON API and renders one card per queue.
      for (let i = 0; i < t.settings.partitions; i++)
        await page.getByText(`commands-${i}`, { exact: true }).first().waitFor({ timeout: 15_000 });
      await mkdir(screenshotDir, { recursive: true });
      const path = join(screenshotDir, 'queue-dashboard.png');
      await page.screenshot({ path, fullPage: false });
      expect((await stat(path)).size).toBeGreaterThan(10_000);
    } finally {
      await browser.close();
    }
  }, 90_000);

  it('refuses the board to a browser whose operator password is wrong', async () => {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const context = await browser.newContext({ httpCredentials: { username: 'operator', password: 'a-wrong-password-000000' } });
      const page = await context.newPage();
      const response = await page.goto(`${t.client.base}/admin/queues`);
      expect(response?.status()).toBe(401);
      expect(await page.content()).toContain('unauthenticated');
      expect(await page.content()).not.toContain('commands-0');
    } finally {
      await browser.close();
    }
  });
});
