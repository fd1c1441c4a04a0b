import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../../scripts/require-node-24.mjs';

describe('the Node version guard', () => {
  it('accepts Node 24 and names the version it refuses', () => {
    expect(nodeVersionProblem('v24.11.0')).toBeNull();
    expect(nodeVersionProblem('v20.20.2')).toBe('Agora needs Node 24; this is 20.20.2');
    expect(nodeVersionProblem('v26.0.0')).toBe('Agora needs Node 24; this is 26.0.0');
  });

  it('stops npm start with one clear line before any TypeScript loads', () => {
    const run = spawnSync(process.execPath, ['--import', './scripts/require-node-24.mjs', 'src/bin/main.ts', 'all'], {
      env: { ...process.env, AGORA_NODE_VERSION_FOR_TESTS: 'v20.20.2', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('Agora needs Node 24; this is 20.20.2\n');
    expect(run.stdout).toBe('');
  });
});
