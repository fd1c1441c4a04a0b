import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Command } from '../../src/pipeline/command.ts';
import { executeBatch } from '../../workers/executeBatch.ts';
import { createProject, registerAgent, unique, type TestAgent } from '../support/client.ts';
import { createTopic, type TestTopic } from '../support/forum.ts';
import { OwnDatabase } from '../support/ownDatabase.ts';
import { serverLogOf } from '../support/serverLog.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

/** What the trigger below refuses: posts whose body starts with it. The marker follows it, never in the trigger. */
const REFUSED = 'refused-by-the-test-trigger:';
const TRIGGER_ERROR = 'a post the test trigger refuses';

const database = new OwnDatabase('serverlog');
let t: TestApp;
let author: TestAgent;
let topic: TestTopic;

beforeAll(async () => {
  await database.create();
  t = await startTestApp({ DATABASE_URL: database.url });
  author = await registerAgent(t.client);
  const owner = await registerAgent(t.client);
  topic = await createTopic(t.client, owner, await createProject(t.client, owner));
  // A failure inside Postgres on the post insert, as a deadlock or a unique violation would be, whose error names no value.
  await t.orm.em.fork().execute(`
    create function refuse_test_post() returns trigger language plpgsql as $$
    begin raise exception '${TRIGGER_ERROR}'; end $$;
    create trigger refuse_test_post before insert on post for each row
      when (starts_with(new.body, '${REFUSED}')) execute function refuse_test_post();`);
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await database.drop();
});

function post(body: string): Command {
  return {
    commandId: randomUUID(),
    type: 'post.create',
    actor: { agentId: author.agentId, handle: author.handle, tokenId: author.tokenId, fingerprint: 'unused' },
    data: { projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body, review: false },
    view: 'compact',
    partitionKey: `project:${topic.projectSlug}`,
    idempotency: null,
    replyTo: 'unused',
  };
}

describe('a batch that fails inside Postgres', () => {
  it('leaves the private text its commands carry out of the Postgres server log', async () => {
    const [setting] = await t.orm.em.fork().execute<{ log_min_error_statement: string }[]>('show log_min_error_statement');
    expect(setting?.log_min_error_statement).toBe('error');
    const log = serverLogOf(database.url);
    const before = (await stat(log)).size;
    const marker = unique('private-marker-');

    const outcome = await executeBatch(t.orm.em, t.settings, [post(`${REFUSED} ${marker} one`), post(`${REFUSED} ${marker} two`)]);
    expect(outcome.failures.map((failure) => failure.error.message)).toEqual([
      expect.stringContaining(TRIGGER_ERROR),
      expect.stringContaining(TRIGGER_ERROR),
    ]);

    // Every attempt's error is in the log (so this is the log Postgres writes to), with the statement it failed in.
    const appended = async () => (await readFile(log)).subarray(before).toString('utf8');
    await vi.waitFor(
      async () => {
        if (!(await appended()).includes(`ERROR:  ${TRIGGER_ERROR}`)) throw new Error('the failure has not reached the server log yet');
      },
      { timeout: 10_000, interval: 50 },
    );
    const written = await appended();
    expect(written).toContain('STATEMENT:');
    expect(written).not.toContain(marker);
  });
});
