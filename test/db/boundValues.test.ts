import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashToken } from '../../src/http/auth.ts';
import { createProject, registerAgent, unique, type TestAgent } from '../support/client.ts';
import { createTopic } from '../support/forum.ts';
import { OwnDatabase } from '../support/ownDatabase.ts';
import { openCase } from '../support/relay.ts';
import { logFrom, messagesOn, serverLogOf } from '../support/serverLog.ts';
import { prepare, sign } from '../support/signedActions.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

/** Every statement of every session on this database is logged, with its parameters apart (log_parameter_max_length: whole). */
const database = new OwnDatabase('boundvalues');
let t: TestApp;
let agent: TestAgent;

beforeAll(async () => {
  await database.create();
  await database.configure({ log_statement: 'all' });
  t = await startTestApp({ DATABASE_URL: database.url });
  agent = await registerAgent(t.client);
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await database.drop();
});

/**
 * What `work` made Postgres log on this database: the text of every
 * statement, and every statement's parameters. A last statement with a
 * literal in its text (written by the test itself) marks the end: once it is
 * in the log, so is everything before it, and a value inlined in a text is
 * where this test would find it.
 */
async function logged(work: () => Promise<void>): Promise<{ texts: string[]; parameters: string[] }> {
  const appended = await logFrom(serverLogOf(database.url));
  await work();
  const end = unique('end-of-work-');
  await t.orm.em.fork().execute(`select '${end}' as end`);
  let messages: string[] = [];
  await vi.waitFor(
    async () => {
      messages = messagesOn(await appended(), database.name);
      if (!messages.some((message) => message.includes(end))) throw new Error('the last statement has not reached the server log yet');
    },
    { timeout: 10_000, interval: 50 },
  );
  const texts = messages.filter((message) => /^LOG: {2}(statement|execute [^:]*):/.test(message));
  expect(texts.filter((text) => text.includes(end))).toHaveLength(1);
  return { texts, parameters: messages.filter((message) => message.startsWith('DETAIL:  parameters:')) };
}

/** None of `values` in any statement's text; `sent` among some statement's parameters (so the request did reach Postgres here). */
function expectBound(log: { texts: string[]; parameters: string[] }, values: string[], sent: string): void {
  for (const value of values) expect(log.texts.filter((text) => text.includes(value))).toEqual([]);
  expect(log.parameters.some((parameters) => parameters.includes(sent))).toBe(true);
}

describe('the statements a request makes Postgres run', () => {
  it('carry an authenticated read’s token hash as a bound value, never in their text', async () => {
    const tokenHash = hashToken(agent.token);
    // Not cached: the lookup goes to Postgres.
    await t.redis.del(`${t.settings.redisPrefix}:credential:${tokenHash}`);
    const log = await logged(async () => {
      expect((await t.client.get('/api/forum/agents/me', {}, { token: agent.token })).status).toBe(200);
    });
    expectBound(log, [agent.token, tokenHash], tokenHash);
  });

  it('carry a signed action’s payload, envelope and signature as bound values, from its prepare to its submission', async () => {
    const subject = await registerAgent(t.client);
    let signed = { payload: '', envelope: '', signature: '' };
    const log = await logged(async () => {
      const prepared = await prepare(t.client, '/api/forum/attestations', agent, {
        subject: subject.handle,
        kind: 'vouch',
        claim: 'bound',
      });
      signed = sign(prepared.signing, agent.keys);
      const created = await t.client.post('/api/forum/attestations', { action: 'create', ...signed }, { token: agent.token });
      expect(created.status).toBe(200);
    });
    expectBound(log, [signed.payload, signed.envelope, signed.signature], signed.signature);
  });

  it('carry a relay case’s private text as bound values', async () => {
    const summary = unique('private-summary-');
    const log = await logged(async () => {
      await openCase(t.client, agent, { summary });
    });
    expectBound(log, [summary], summary);
  });

  it('carry a post’s body as a bound value', async () => {
    const topic = await createTopic(t.client, agent, await createProject(t.client, agent));
    const body = unique('private-body-');
    const log = await logged(async () => {
      const posted = await t.client.post(
        '/api/forum/posts',
        { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body },
        { token: agent.token },
      );
      expect(posted.status).toBe(200);
    });
    expectBound(log, [body], body);
  });
});
