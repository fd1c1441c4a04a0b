import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = resolve('scripts/longLines.ts');
let checkout: string | null = null;

afterEach(() => {
  if (checkout) rmSync(checkout, { recursive: true, force: true });
  checkout = null;
});

/** The check run in a git checkout of its own holding `files`; what it printed and its exit status. */
function check(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'long-lines-'));
  checkout = dir;
  spawnSync('git', ['init', '-q'], { cwd: dir });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const run = spawnSync(process.execPath, [SCRIPT], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe('the long-line check', () => {
  it('passes lines of 160 characters, counting characters rather than bytes', () => {
    expect(check({ 'src/a.ts': `${'x'.repeat(160)}\n`, 'test/b.ts': `${'é'.repeat(160)}\n` })).toEqual({ status: 0, output: '' });
  });

  it('fails on a line of 161 in any code folder, naming the file and line', () => {
    const { status, output } = check({ 'src/a.ts': 'ok\n', 'config/rules.yml': `ok\n${'y'.repeat(161)}\n` });
    expect(status).toBe(1);
    expect(output).toContain('config/rules.yml:2: 161 characters');
    expect(output).not.toContain('src/a.ts');
  });

  it('leaves out generated files, ignored files and folders outside the code', () => {
    const long = `${'z'.repeat(200)}\n`;
    const files = { 'sdk/openapi/forum.json': long, 'sdk/src/generated/forum.ts': long, 'docs/a.md': long, 'src/out.log': long };
    expect(check({ ...files, '.gitignore': '*.log\n' }).status).toBe(0);
  });
});
