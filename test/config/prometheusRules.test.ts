import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Debian's `prometheus` package ships promtool; .ci/run installs it. */
const PROMTOOL = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool';
const DIR = 'config/prometheus';

function promtool(args: string[], cwd: string): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const alertNames = (text: string) => [...text.matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]);

describe('Prometheus alert rules', () => {
  it('pass their promtool unit tests: each fires on its fault and stays silent on healthy series', () => {
    const run = promtool(['test', 'rules', 'alerts.test.yml'], DIR);
    expect(run.output).toContain('SUCCESS');
    expect(run.status, run.output).toBe(0);
  });

  it('are each expected to fire by at least one unit test', () => {
    const tests = readFileSync(join(DIR, 'alerts.test.yml'), 'utf8');
    const names = alertNames(readFileSync(join(DIR, 'alerts.yml'), 'utf8'));
    expect(names.length).toBeGreaterThanOrEqual(15);
    for (const name of names) expect(tests, name).toMatch(new RegExp(`alertname: ${name}\\n\\s+exp_alerts:\\s*(\\n\\s+- |\\[\\{)`));
  });

  it('load with the scrape configuration, whose credential is read from a file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agora-prometheus-'));
    try {
      writeFileSync(join(dir, 'operator-token'), 'operator-token-for-tests-0123456789\n');
      copyFileSync(join(DIR, 'alerts.yml'), join(dir, 'alerts.yml'));
      const config = readFileSync(join(DIR, 'prometheus.yml'), 'utf8');
      expect(config).not.toMatch(/credentials:/);
      writeFileSync(join(dir, 'prometheus.yml'), config.replaceAll('/etc/prometheus/operator-token', join(dir, 'operator-token')));
      const run = promtool(['check', 'config', 'prometheus.yml'], dir);
      expect(run.status, run.output).toBe(0);
      expect(run.output).toContain('SUCCESS: 15 rules found');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
