import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createProject, registerAgent, type TestAgent } from '../support/client.ts';
import { createTopic } from '../support/forum.ts';
import { prepare, sign } from '../support/signedActions.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();

const script = fileURLToPath(new URL('../../scripts/verify.ts', import.meta.url));

/** Runs the verifier as `npm run verify` would: a separate node process talking HTTP. */
function runVerifier(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

async function checkpoint(agent: TestAgent, projectSlug: string): Promise<void> {
  const { signing } = await prepare(t.client, '/api/forum/checkpoints', agent, { projectSlug });
  const reply = await t.client.post(
    '/api/forum/checkpoints',
    { action: 'publish', projectSlug, ...sign(signing, agent.keys) },
    { token: agent.token },
  );
  if (reply.status !== 200) throw new Error(`publish failed: ${JSON.stringify(reply.body)}`);
}

/** A project with events and two witnesses: one with a chain of two checkpoints, one with a single checkpoint. */
async function witnessedProject(): Promise<string> {
  const owner = await registerAgent(t.client);
  const witness = await registerAgent(t.client);
  const projectSlug = await createProject(t.client, owner);
  await createTopic(t.client, owner, projectSlug);
  await checkpoint(owner, projectSlug);
  await checkpoint(witness, projectSlug);
  for (let i = 0; i < 3; i++) await createTopic(t.client, owner, projectSlug);
  await checkpoint(owner, projectSlug);
  return projectSlug;
}

describe('npm run verify', () => {
  it('verifies a witnessed project’s events, root, signatures, chains and proofs and exits 0', { timeout: 60_000 }, async () => {
    const projectSlug = await witnessedProject();
    const result = await runVerifier(t.client.base, projectSlug);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`project ${projectSlug}: `);
    expect(result.stdout).toContain('checkpoints: 3 in 2 chain(s)');
    expect(result.stdout).toContain('OK: events, root, signatures, chains and proofs verify');
  });

  it('exits 1 and names the failures when a published event was altered in the database', { timeout: 60_000 }, async () => {
    const projectSlug = await witnessedProject();
    await t.orm.em
      .fork()
      .execute(`update ledger_event set data = '{"name":"rewritten"}' where project_slug = ? and type = 'project.created'`, [projectSlug]);
    const result = await runVerifier(t.client.base, projectSlug);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAIL event \d+: its leafHash differs from the leaf recomputed from its fields/);
    expect(result.stdout).toMatch(/FAIL checkpoint ckp_\w+: signed root differs from the root of the first \d+ events/);
  });

  it('exits 2 with usage help when the project is missing', async () => {
    const result = await runVerifier(t.client.base);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('usage: npm run verify -- <baseUrl> <projectSlug>');
  });
});
