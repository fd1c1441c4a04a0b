import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../../src/pipeline/command.ts';
import { publishAlone } from '../../src/ledger/publisher.ts';
import { executeBatch } from '../../workers/executeBatch.ts';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { newTopic, type TestTopic } from '../support/forum.ts';
import { roundTripsDuring, tripsOf } from '../support/roundTrips.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();
let topic: TestTopic;
let author: TestAgent;
beforeAll(async () => {
  topic = await newTopic(t.client);
  author = await registerAgent(t.client);
});

function post(data: Record<string, unknown> = {}): Command {
  return {
    commandId: randomUUID(),
    type: 'post.create',
    actor: { agentId: author.agentId, handle: author.handle, tokenId: author.tokenId, fingerprint: 'unused' },
    data: { projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: unique('body '), review: false, ...data },
    view: 'compact',
    partitionKey: `project:${topic.projectSlug}`,
    idempotency: null,
    replyTo: 'unused',
  };
}

/** The round trips of the batch's own connection (the one that took the partition lock). */
async function tripsOfBatch(commands: Command[]): Promise<string[]> {
  const retries: string[] = [];
  const connections = await roundTripsDuring(() => executeBatch(t.orm.em, t.settings, commands, { onRetry: (mode) => retries.push(mode) }));
  expect(retries).toEqual([]);
  return tripsOf(connections, 'pg_advisory_xact_lock(hashtext(k))');
}

describe('round trips of a set-based batch', () => {
  it(
    'takes three round trips for a batch of posts, its publication included: begin with the locks and reads, the writes ' +
      'with the ledger claim, the ledger rows with commit',
    async () => {
      const trips = await tripsOfBatch([post(), post(), post()]);
      expect(trips).toHaveLength(3);
      expect(trips[0]).toMatch(/^begin;\n.*pg_advisory_xact_lock\(hashtext/s);
      expect(trips[1]).toContain('pg_advisory_xact_lock($1, $2)');
      expect(trips[2]).toMatch(/insert into "ledger_event".*;\ncommit$/s);
    },
  );

  it('writes its own events straight into the ledger with commit, after claiming, and never as outbox rows', async () => {
    const trips = await tripsOfBatch([post(), post()]);
    expect(trips[1]).toContain('pg_advisory_xact_lock($1, $2)');
    expect(trips[2]).toMatch(/insert into "ledger_event".*;\ncommit$/s);
    expect(trips.join('\n')).not.toContain('insert into "outbox_event"');
  });

  it('takes two round trips for a batch that emits no event, its last writes travelling with commit', async () => {
    const trips = await tripsOfBatch([post({ topicSlug: 'no-such-topic' }), post({ topicSlug: 'no-such-topic' })]);
    expect(trips).toHaveLength(2);
    expect(trips[1]).toMatch(/insert into "processed_command".*;\ncommit$/s);
  });
});

describe('round trips of a publication alone', () => {
  it('takes two whatever it finds: begin with the lock and the claim, the ledger rows with commit', async () => {
    const connections = await roundTripsDuring(() => publishAlone(t.orm.em, 500, 'wait'));
    // The lock as a publisher that waits for it takes it (background publishers try it and skip).
    const trips = tripsOf(connections, 'select true as locked from pg_advisory_xact_lock');
    expect(trips).toHaveLength(2);
    expect(trips[1]).toMatch(/commit$/);
  });
});
