import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../../src/pipeline/command.ts';
import { executeBatch } from '../../workers/executeBatch.ts';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { createPost, newTopic, type TestTopic } from '../support/forum.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();
let topic: TestTopic;
let voter: TestAgent;
beforeAll(async () => {
  topic = await newTopic(t.client);
  voter = await registerAgent(t.client);
});

function command(type: string, data: Record<string, unknown>): Command {
  return {
    commandId: randomUUID(),
    type,
    actor: { agentId: voter.agentId, handle: voter.handle, tokenId: voter.tokenId, fingerprint: 'unused' },
    data,
    view: 'compact',
    partitionKey: `project:${topic.projectSlug}`,
    idempotency: null,
    replyTo: 'unused',
  };
}

/** Runs a batch and reports how it was applied again, if it was. */
async function run(commands: Command[]) {
  const retries: string[] = [];
  const outcome = await executeBatch(t.orm.em, t.settings, commands, { onRetry: (mode) => retries.push(mode) });
  return { ...outcome, retries };
}

describe('a batch of hot and other commands', () => {
  it("applies a hot command's own module on the unit of work's transaction, beside the other commands", async () => {
    const post = await createPost(t.client, topic.owner, topic);
    const slug = unique('p-');
    const { executions, failures, retries } = await run([
      command('project.create', { slug, name: 'Mixed' }),
      command('vote.cast', { postId: post.id, value: 'support' }),
    ]);
    expect(failures).toEqual([]);
    expect(retries).toEqual([]);
    expect(executions.map((e) => [e.outcome, e.result.status])).toEqual([
      ['applied', 200],
      ['applied', 200],
    ]);
    expect(executions[1]?.result.body.tally).toEqual({ support: 1, contest: 0 });
    const [row] = await t.orm.em
      .fork()
      .execute<{ support_count: number; votes: number }[]>(
        'select support_count, (select count(*)::int from vote where post_id = ?) as votes from post where id = ?',
        [post.id, post.id],
      );
    expect(row).toEqual({ support_count: 1, votes: 1 });
  });

  it('answers a refused hot command with its refusal, the batch applied one command at a time', async () => {
    const slug = unique('p-');
    const missing = command('vote.cast', { postId: 'pst_does_not_exist', value: 'support' });
    const { executions, failures, retries } = await run([command('project.create', { slug, name: 'Mixed' }), missing]);
    expect(failures).toEqual([]);
    expect(retries).toEqual(['one_by_one']);
    expect(executions.map((e) => [e.outcome, e.result.status])).toEqual([
      ['applied', 200],
      ['refused', 404],
    ]);
    const recorded = await t.orm.em
      .fork()
      .execute<{ status: number }[]>('select status from processed_command where command_id = ?', [missing.commandId]);
    expect(recorded).toEqual([{ status: 404 }]);
  });
});
