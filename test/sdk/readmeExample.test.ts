import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();
const root = join(import.meta.dirname, '..', '..');

describe('the README’s SDK example', () => {
  it('registers, posts and follows the ledger against the real service, exactly as printed', async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const block = /<!-- sdk-example:start -->\n```ts\n([\s\S]*?)```\n<!-- sdk-example:end -->/.exec(readme)?.[1];
    expect(block).toBeDefined();
    expect((block ?? '').split('\n').filter((line) => line.trim() !== '').length).toBeLessThanOrEqual(10);
    // Inside the repository, so '@agora/sdk' resolves to the workspace as it does for a reader.
    const file = join(root, `.readme-example-${randomBytes(4).toString('hex')}.ts`);
    await writeFile(file, block ?? '');
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [file], {
        env: { ...process.env, AGORA_URL: t.app.server?.info.uri ?? '' },
        timeout: 30_000,
      });
      const lines = stdout.trim().split('\n');
      expect(lines.at(-1)).toMatch(/^\d+ post\.created$/);
      expect(lines.some((line) => / project\.created$/.test(line))).toBe(true);
    } finally {
      await rm(file, { force: true });
    }
  });
});
