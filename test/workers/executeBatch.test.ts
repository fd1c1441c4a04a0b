import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Project } from '../../src/entities/project.ts';
import type { Command } from '../../src/pipeline/command.ts';
import { executeBatch } from '../../workers/executeBatch.ts';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();
let agent: TestAgent;
beforeAll(async () => {
  agent = await registerAgent(t.client);
});

function createProjectCommand(slug: string): Command {
  return {
    commandId: randomUUID(),
    type: 'project.create',
    actor: { agentId: agent.agentId, handle: agent.handle, tokenId: agent.tokenId, fingerprint: 'unused' },
    data: { slug, name: 'Batch' },
    view: 'compact',
    partitionKey: `project:${slug}`,
    idempotency: null,
    replyTo: 'unused',
  };
}

/** The command as an API from before Command.view enqueued it: no view field, the validated view (if any) in its data. */
function olderApiCommand(slug: string, view?: 'compact' | 'full'): Command {
  const { view: _view, data, ...rest } = createProjectCommand(slug);
  return { ...rest, data: view ? { ...data, view } : data } as Command;
}

describe('a batch of commands in one transaction', () => {
  it('applies every command, refusing only the one that conflicts', async () => {
    const slug = unique('b-');
    const batch = [createProjectCommand(slug), createProjectCommand(slug), createProjectCommand(unique('b-'))];
    const { executions, failures } = await executeBatch(t.orm.em, t.settings, batch);
    expect(failures).toEqual([]);
    expect(executions.map((e) => e.result.status)).toEqual([200, 409, 200]);
    expect(await t.orm.em.fork().count(Project, { slug })).toBe(1);
  });

  it('isolates a command that breaks the transaction: the others still commit', async () => {
    // Past Joi, a slug longer than its column makes Postgres fail the statement: not a refusal, a failure.
    const broken = createProjectCommand('x'.repeat(100));
    const good = [createProjectCommand(unique('b-')), createProjectCommand(unique('b-'))];
    const { executions, failures } = await executeBatch(t.orm.em, t.settings, [good[0] as Command, broken, good[1] as Command]);
    expect(failures.map((f) => f.command.commandId)).toEqual([broken.commandId]);
    expect(executions.map((e) => e.result.status)).toEqual([200, 200]);
    expect(await t.orm.em.fork().count(Project, { slug: { $in: good.map((c) => String(c.data.slug)) } })).toBe(2);
  });

  it('answers a command seen before with its first result, applies nothing again and refreshes the ETag scopes it changed', async () => {
    const command = createProjectCommand(unique('b-'));
    const first = await executeBatch(t.orm.em, t.settings, [command]);
    const again = await executeBatch(t.orm.em, t.settings, [command]);
    expect(again.executions[0]?.result).toEqual(first.executions[0]?.result);
    expect(again.executions[0]?.outcome).toBe('replayed');
    expect(first.executions[0]?.touched.length).toBeGreaterThan(0);
    expect(again.executions[0]?.touched).toEqual(first.executions[0]?.touched);
    expect(await t.orm.em.fork().count(Project, { slug: String(command.data.slug) })).toBe(1);
  });

  it('expires again the cached credential of a token whose revocation it finds already committed', async () => {
    const owner = await registerAgent(t.client);
    const revoke: Command = {
      commandId: randomUUID(),
      type: 'token.revoke',
      actor: { agentId: owner.agentId, handle: owner.handle, tokenId: owner.tokenId, fingerprint: 'unused' },
      data: { tokenId: owner.tokenId },
      view: 'compact',
      partitionKey: `agent:${owner.agentId}`,
      idempotency: null,
      replyTo: 'unused',
    };
    const first = await executeBatch(t.orm.em, t.settings, [revoke]);
    const again = await executeBatch(t.orm.em, t.settings, [revoke]);
    expect(first.executions[0]?.expiredCredentials).toHaveLength(1);
    expect(again.executions[0]).toMatchObject({ outcome: 'replayed', expiredCredentials: first.executions[0]?.expiredCredentials });
  });

  it('applies a command enqueued without a view field, as an older API would, and answers in the compact view', async () => {
    const slug = unique('b-');
    const { executions, failures } = await executeBatch(t.orm.em, t.settings, [olderApiCommand(slug)]);
    expect(failures).toEqual([]);
    expect(executions[0]?.result.status).toBe(200);
    expect(Object.keys(executions[0]?.result.body.project as object).sort()).toEqual(['id', 'name', 'role', 'slug']);
    expect(await t.orm.em.fork().count(Project, { slug })).toBe(1);
  });

  it('answers an older API command in the view its data carries, and hands the handler data without it', async () => {
    const command = olderApiCommand(unique('b-'), 'full');
    const { executions } = await executeBatch(t.orm.em, t.settings, [command]);
    expect(executions[0]?.result.body.project).toMatchObject({
      slug: command.data.slug,
      summary: '',
      roster: [{ handle: agent.handle, role: 'owner', creator: true }],
    });
    expect(executions[0]?.command.view).toBe('full');
    expect(executions[0]?.command.data).toEqual({ slug: command.data.slug, name: 'Batch' });
  });
});
