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
    data: { slug, name: 'Batch', view: 'compact' },
    partitionKey: `project:${slug}`,
    idempotency: null,
    replyTo: 'unused',
  };
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

  it('answers a command seen before with its first result and applies nothing again', async () => {
    const command = createProjectCommand(unique('b-'));
    const first = await executeBatch(t.orm.em, t.settings, [command]);
    const again = await executeBatch(t.orm.em, t.settings, [command]);
    expect(again.executions[0]?.result).toEqual(first.executions[0]?.result);
    expect(again.executions[0]?.touched).toEqual([]);
    expect(await t.orm.em.fork().count(Project, { slug: String(command.data.slug) })).toBe(1);
  });
});
