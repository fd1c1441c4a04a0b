import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Failpoint } from '../../src/failpoints.ts';
import type { Command } from '../../src/pipeline/command.ts';
import { redisKeys } from '../../src/redis.ts';
import { takesSetBasedPath } from '../../workers/applySetBased.ts';
import { registerAgent, unique, type Client, type Reply, type TestAgent } from '../support/client.ts';
import { newTopic, type TestTopic } from '../support/forum.ts';
import { queuesIdle, workersListening } from '../support/queues.ts';
import { until } from '../support/until.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
/** A second API on the same prefix that waits long for replies: a reply sent before a crash must find its request still waiting, however loaded the machine. */
let patient: TestApp;
let agents: TestAgent[];
let topic: TestTopic;
const children: ChildProcess[] = [];

/** A worker role in its own OS process; with a failpoint armed it kills itself with SIGKILL there. */
function spawnWorker(failpoint?: Failpoint): { child: ChildProcess; stderr: string[] } {
  const env = {
    ...process.env,
    DATABASE_URL: t.settings.databaseUrl,
    REDIS_URL: t.settings.redisUrl,
    REDIS_PREFIX: t.settings.redisPrefix,
    WORKER_LOCK_MS: '1000',
    LOG_LEVEL: 'silent',
    METRICS_PORT: '0',
    AGORA_FAILPOINTS: failpoint ?? '',
  };
  const child = spawn(process.execPath, ['src/bin/main.ts', 'worker'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  children.push(child);
  return { child, stderr };
}

/** Stops the healthy workers once they have run every job, so none is left for the next armed worker. */
async function stopWorkersWhenIdle(): Promise<void> {
  // No queue holds a job any more: the next scenario starts clean.
  await until(() => queuesIdle(t.redis, t.settings), 30_000, 'the queues to be idle');
  for (const child of children.splice(0)) child.kill('SIGKILL');
}

beforeAll(async () => {
  const registrar = await startTestApp();
  agents = await Promise.all(Array.from({ length: 4 }, () => registerAgent(registrar.client)));
  topic = await newTopic(registrar.client);
  await registrar.stop();
  // API only: every command waits in the queue until a worker process takes it.
  t = await startTestApp({ COMMAND_TIMEOUT_MS: '3000' }, ['api']);
  patient = await startTestApp({ COMMAND_TIMEOUT_MS: '60000', REDIS_PREFIX: t.settings.redisPrefix }, ['api']);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await patient.stop();
  await t.stop();
});

interface Write {
  index: number;
  label: string;
  key: string;
  agent: TestAgent;
}

interface Crash {
  writes: Write[];
  /** Each write's reply as the process died (null: still waiting). */
  atCrash: (Reply | null)[];
  /** Each write's reply once a healthy worker ran and every client retried with its key until it had one. */
  final: Reply[];
  /** Each write's reply to one more retry with its key, after the final one. */
  replays: Reply[];
  /** Writes committed when the crashed worker died, read before any other worker ran. */
  committedAtCrash: number;
}

/**
 * Sends `count` writes with retry keys to a worker armed with `failpoint`; it
 * dies at its first batch there. Then a healthy worker finishes the queue and
 * every client retries with its own key until answered, as a real client would.
 */
async function crashAt(
  failpoint: Failpoint,
  count: number,
  send: (w: Write) => Promise<Reply>,
  committed: (writes: Write[]) => Promise<number>,
): Promise<Crash> {
  const armed = spawnWorker(failpoint);
  // Writes sent before it listens could time out (503) on a slow start, and their replies would find no one waiting.
  await until(async () => (await workersListening(t.redis, t.settings, t.settings.partitions)) > 0, 30_000, 'the armed worker to listen');
  const writes = Array.from({ length: count }, (_, i) => ({
    index: i,
    label: unique('crash-'),
    key: unique('k'),
    agent: agents[i % agents.length] as TestAgent,
  }));
  const atCrash: (Reply | null)[] = writes.map(() => null);
  const first = writes.map((w, i) => send(w).then((reply) => (atCrash[i] = reply)));
  const [, signal] = await Promise.race([
    once(armed.child, 'exit'),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the armed worker never reached ${failpoint}`)), 60_000).unref()),
  ]);
  expect(signal).toBe('SIGKILL');
  expect(armed.stderr.join('')).toContain(`failpoint ${failpoint} reached`);
  const committedAtCrash = await committed(writes);
  // Replies published before the crash are on their way; let them land before judging what the crash left.
  if (failpoint === 'batch-replied-before-complete')
    await until(() => atCrash.filter((r) => r?.status === 200).length >= committedAtCrash, 30_000, 'the replies sent before the crash');
  const snapshot = [...atCrash];

  // The healthy worker before the first attempts settle: those the crash left queued are answered by it.
  spawnWorker();
  await Promise.all(first);
  const final = await Promise.all(
    writes.map(async (w, i) => {
      let reply = atCrash[i] as Reply;
      // 5xx: not finished yet; 409 idempotency_in_progress: the first attempt is still held.
      for (let attempt = 0; attempt < 300 && (reply.status >= 500 || reply.body?.error?.code === 'idempotency_in_progress'); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        reply = await send(w);
      }
      return reply;
    }),
  );
  const replays = await Promise.all(writes.map(send));
  await stopWorkersWhenIdle();
  return { writes, atCrash: snapshot, final, replays, committedAtCrash };
}

const postVia = (client: Client) => (w: Write) =>
  client.post(
    '/api/forum/posts',
    { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: w.label },
    { token: w.agent.token, headers: { 'idempotency-key': w.key } },
  );

async function postCounts(writes: Write[]): Promise<Map<string, number>> {
  const rows = await t.orm.em
    .fork()
    .execute<{ body: string; n: number }[]>('select body, count(*)::int as n from post where body in (?) group by body', [
      writes.map((w) => w.label),
    ]);
  return new Map(rows.map((row) => [row.body, row.n]));
}
const postsCommitted = async (writes: Write[]) => (await postCounts(writes)).size;

/**
 * Results recorded for these writes' own commands, refusals too (a batch may commit only refusals): their
 * command ids are in their retry keys' claims, so other files' commands on the shared database never count.
 */
async function resultsCommitted(writes: Write[]): Promise<number> {
  const keys = redisKeys(t.settings.redisPrefix);
  const claims = await Promise.all(writes.map((w) => t.redis.get(keys.idempotency(w.agent.agentId, w.key))));
  const commandIds = claims.flatMap((claim) => (claim ? [(JSON.parse(claim) as { commandId: string }).commandId] : []));
  if (commandIds.length === 0) return 0;
  const rows = await t.orm.em
    .fork()
    .execute<{ n: number }[]>('select count(*)::int as n from processed_command where command_id in (?)', [commandIds]);
  return rows[0]?.n ?? 0;
}

/** Every write answered 200, stored exactly once, and its retry answers the same record. */
async function expectEachPostOnceAndReplayed(crash: Crash): Promise<void> {
  expect(crash.final.map((reply) => reply.status)).toEqual(crash.writes.map(() => 200));
  const counts = await postCounts(crash.writes);
  expect(crash.writes.map((w) => counts.get(w.label))).toEqual(crash.writes.map(() => 1));
  expect(crash.replays.map((reply) => reply.body.post.id)).toEqual(crash.final.map((reply) => reply.body.post.id));
  expect(crash.replays.every((reply) => reply.headers.get('idempotency-replayed') === 'true')).toBe(true);
}

describe('a worker process that dies at a named point of a batch of posts', () => {
  it('dies mid-transaction with nothing committed, and every post is then applied once and answered to its retry', async () => {
    const crash = await crashAt('batch-mid-transaction', 20, postVia(t.client), postsCommitted);
    expect(crash.committedAtCrash).toBe(0);
    expect(crash.atCrash.filter((reply) => reply?.status === 200)).toEqual([]);
    await expectEachPostOnceAndReplayed(crash);
  }, 120_000);

  it('dies after its batch committed but before any reply, and the re-run answers from the recorded results without applying twice', async () => {
    const crash = await crashAt('batch-committed-before-reply', 20, postVia(t.client), postsCommitted);
    expect(crash.committedAtCrash).toBeGreaterThan(0);
    expect(crash.atCrash.filter((reply) => reply?.status === 200)).toEqual([]);
    await expectEachPostOnceAndReplayed(crash);
  }, 120_000);

  it('dies after replying but before its job completed, and the job run again by another worker applies nothing twice', async () => {
    const crash = await crashAt('batch-replied-before-complete', 20, postVia(patient.client), postsCommitted);
    expect(crash.committedAtCrash).toBeGreaterThan(0);
    expect(crash.atCrash.filter((reply) => reply?.status === 200).length).toBe(crash.committedAtCrash);
    await expectEachPostOnceAndReplayed(crash);
  }, 120_000);
});

describe('a worker process that dies holding the locks of a per-command batch', () => {
  it('dies in lockBatch with nothing committed, and every project is then created once and answered to its retry', async () => {
    // Project creation has no set-based path: its batches take their locks in lockBatch (workers/batchTransaction.ts), the failpoint armed here.
    expect(takesSetBasedPath([{ type: 'project.create' } as Command])).toBe(false);
    const send = (w: Write) =>
      t.client.post(
        '/api/forum/projects',
        { action: 'create', slug: w.label, name: 'Locked' },
        { token: w.agent.token, headers: { 'idempotency-key': w.key } },
      );
    const crash = await crashAt('batch-mid-transaction', 12, send, resultsCommitted);
    expect(crash.committedAtCrash).toBe(0);
    expect(crash.atCrash.filter((reply) => reply?.status === 200)).toEqual([]);
    expect(crash.final.map((reply) => reply.status)).toEqual(crash.writes.map(() => 200));
    const rows = await t.orm.em
      .fork()
      .execute<{ slug: string; n: number }[]>('select slug, count(*)::int as n from project where slug in (?) group by slug', [
        crash.writes.map((w) => w.label),
      ]);
    const counts = new Map(rows.map((row) => [row.slug, row.n]));
    expect(crash.writes.map((w) => counts.get(w.label))).toEqual(crash.writes.map(() => 1));
    expect(crash.replays.map((reply) => reply.body.project.slug)).toEqual(crash.writes.map((w) => w.label));
    expect(crash.replays.every((reply) => reply.headers.get('idempotency-replayed') === 'true')).toBe(true);
  }, 120_000);
});

describe('a worker process that dies after committing a batch with refusals in it', () => {
  it('replays each command’s recorded result, the refusals too, and creates each project once', async () => {
    const taken = unique('crash-taken-');
    const owner = agents[0] as TestAgent;
    const createTaken = () =>
      t.client.post(
        '/api/forum/projects',
        { action: 'create', slug: taken, name: 'Taken' },
        { token: owner.token, headers: { 'idempotency-key': `taken-${taken}` } },
      );
    spawnWorker();
    await until(async () => (await createTaken()).status === 200, 30_000, 'a healthy worker to create the taken project');
    await stopWorkersWhenIdle();

    // Every fourth write asks for the taken slug: a refusal sends its batch down the savepoint path.
    const refused = (w: Write) => w.index % 4 === 0;
    const send = (w: Write) =>
      t.client.post(
        '/api/forum/projects',
        { action: 'create', slug: refused(w) ? taken : w.label, name: 'Crash' },
        { token: w.agent.token, headers: { 'idempotency-key': w.key } },
      );
    const crash = await crashAt('batch-committed-before-reply', 12, send, resultsCommitted);
    expect(crash.committedAtCrash).toBeGreaterThan(0);
    expect(crash.final.map((reply) => reply.status)).toEqual(crash.writes.map((w) => (refused(w) ? 409 : 200)));
    expect(crash.replays.map((reply) => reply.status)).toEqual(crash.final.map((reply) => reply.status));
    const fresh = crash.writes.filter((w) => !refused(w));
    const rows = await t.orm.em
      .fork()
      .execute<{ slug: string; n: number }[]>('select slug, count(*)::int as n from project where slug in (?) group by slug', [
        [taken, ...fresh.map((w) => w.label)],
      ]);
    expect(rows.map((row) => row.n)).toEqual(rows.map(() => 1));
    expect(rows).toHaveLength(fresh.length + 1);
  }, 120_000);
});
