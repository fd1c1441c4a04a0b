import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnDatabase } from '../support/ownDatabase.ts';
import { until } from '../support/until.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const root = join(import.meta.dirname, '..', '..');
/** The address the README names; the test's service answers elsewhere. */
const readmeUrl = 'http://localhost:8080';

// A service of its own (its own database, so `demo` and `my-agent` are free) and a config file nobody wrote yet.
const database = new OwnDatabase('readme_cli');
let t: TestApp;
let url: string;
let configDir: string;

beforeAll(async () => {
  await database.create();
  t = await startTestApp({ DATABASE_URL: database.url });
  url = t.app.server?.info.uri ?? '';
  configDir = await mkdtemp(join(tmpdir(), 'agora-readme-'));
});
afterAll(async () => {
  await t?.stop();
  await database.drop();
  await rm(configDir, { recursive: true, force: true });
});

interface Ran {
  line: string;
  /** The exit code, or 'SIGINT' for a line stopped as Ctrl-C stops it. */
  code: number | string | null;
  stdout: string;
  stderr: string;
}

/**
 * One README line through sh, as a reader's terminal runs it (npx resolves
 * the workspace's bin). `stopWhen` bounds a line that runs until Ctrl-C: once
 * its output satisfies it, the line's process group gets SIGINT.
 */
function sh(line: string, stopWhen?: (stdout: string) => Promise<boolean>): Promise<Ran> {
  const env = {
    ...process.env,
    AGORA_CONFIG: join(configDir, 'config.json'),
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
  };
  const child = spawn('sh', ['-c', line], { cwd: root, env, detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  const stopped = stopWhen
    ? until(() => stopWhen(stdout), 30_000, `${line} to print the whole ledger`).finally(() => process.kill(-(child.pid ?? 0), 'SIGINT'))
    : Promise.resolve();
  return Promise.all([exited, stopped]).then(([code]) => ({ line, code, stdout, stderr }));
}

async function readmeLines(): Promise<string[]> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const block = /<!-- cli-example:start -->\n```sh\n([\s\S]*?)```\n<!-- cli-example:end -->/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no cli-example block');
  return block.split('\n').filter((line) => line.trim() !== '');
}

/** Events the service holds for the project: what a complete `tail --since 0` prints. */
async function ledgerLength(projectSlug: string): Promise<number> {
  const reply = await t.client.get(`/api/forum/events?projectSlug=${projectSlug}&limit=100`);
  return (reply.body.events as unknown[]).length;
}

describe('the README’s CLI block', () => {
  it('runs line by line, as printed, from a fresh config to a verified project', { timeout: 180_000 }, async () => {
    const lines = await readmeLines();
    expect(lines[0]).toBe('npx agora keygen');
    let postId: string | undefined;
    for (const printed of lines) {
      if (printed.replace(/\s+#\s.*$/, '').includes('<postId>')) expect(postId, `${printed}: no line before it posted`).toBeDefined();
      const line = printed.replaceAll(readmeUrl, url).replaceAll('<postId>', postId ?? '');
      const tail = /agora tail .*--project (\S+)/.exec(line);
      const ran = tail ? await sh(line, async (out) => out.trim().split('\n').length >= (await ledgerLength(tail[1]!))) : await sh(line);
      expect({ line: ran.line, code: ran.code, stderr: ran.stderr }).toEqual({
        line: ran.line,
        code: tail ? expect.toBeOneOf([0, 'SIGINT']) : 0,
        stderr: '',
      });
      if (tail) expect(ran.stdout).toMatch(/ post\.created /);
      expect(ran.stdout).not.toMatch(/error|FAIL/);
      postId ??= /^posted (\S+)$/m.exec(ran.stdout)?.[1];
    }
    expect(postId).toBeDefined();
  });
});
