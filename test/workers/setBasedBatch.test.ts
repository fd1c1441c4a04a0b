import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Command } from '../../src/pipeline/command.ts';
import { openOrm } from '../../src/db/orm.ts';
import { executeBatch } from '../../workers/executeBatch.ts';
import { registerAgent, unique, type TestAgent } from '../support/client.ts';
import { newTopic, type TestTopic } from '../support/forum.ts';
import { beginHeld } from '../support/heldTransaction.ts';
import { useTestApp } from '../support/testApp.ts';
import { publishAll } from '../support/ledger.ts';

const t = useTestApp();
let topic: TestTopic;
let voters: TestAgent[];
beforeAll(async () => {
  topic = await newTopic(t.client);
  voters = await Promise.all([1, 2, 3].map(() => registerAgent(t.client)));
});

function command(agent: TestAgent, type: string, data: Record<string, unknown>, commandId: string = randomUUID()): Command {
  return {
    commandId,
    type,
    actor: { agentId: agent.agentId, handle: agent.handle, tokenId: agent.tokenId, fingerprint: 'unused' },
    data,
    view: 'compact',
    partitionKey: `project:${topic.projectSlug}`,
    idempotency: null,
    replyTo: 'unused',
  };
}
const post = (agent: TestAgent, data: Record<string, unknown> = {}, id?: string) =>
  command(
    agent,
    'post.create',
    { projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: unique('body '), review: false, ...data },
    id,
  );
const vote = (agent: TestAgent, postId: string, value: 'support' | 'contest') => command(agent, 'vote.cast', { postId, value });

/** Runs a batch and reports whether it needed the per-command path. */
async function run(commands: Command[]) {
  const retries: string[] = [];
  const outcome = await executeBatch(t.orm.em, t.settings, commands, { onRetry: (mode) => retries.push(mode) });
  return { ...outcome, retries };
}

describe('a batch of hot commands applied set-based', () => {
  it('applies accepted and refused posts of one batch in order without falling back, replies included', async () => {
    const first = post(topic.owner);
    const missingTopic = post(topic.owner, { topicSlug: 'no-such-topic' });
    const strayReply = post(topic.owner, { parentPostId: 'pst_does_not_exist' });
    const { executions, failures, retries } = await run([first, missingTopic, strayReply, post(voters[0] as TestAgent)]);
    expect(failures).toEqual([]);
    expect(retries).toEqual([]);
    expect(executions.map((e) => e.result.status)).toEqual([200, 404, 400, 200]);
    expect(executions.map((e) => e.outcome)).toEqual(['applied', 'refused', 'refused', 'applied']);
    const ids = executions.filter((e) => e.result.status === 200).map((e) => (e.result.body.post as { id: string }).id);
    expect(ids[0]! < ids[1]!).toBe(true);
    const rows = await t.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from post where id in (?)', [ids]);
    expect(rows[0]?.n).toBe(2);
    const refusals = await t.orm.em
      .fork()
      .execute<{ status: number }[]>('select status from processed_command where command_id in (?) order by status', [
        [missingTopic.commandId, strayReply.commandId],
      ]);
    expect(refusals.map((r) => r.status)).toEqual([400, 404]);
  });

  it('stores bodies with quotes, backslashes, placeholders and emoji exactly as sent', async () => {
    const bodies = [
      `it's a "test" \\ with ? and ?? and $1 and {braces}, commas`,
      'emoji 🦊 and \u00e9 and tab\t and newline\n',
      unique(`'); drop table post; --`),
    ];
    const { executions, retries } = await run(bodies.map((body) => post(topic.owner, { body })));
    expect(retries).toEqual([]);
    const ids = executions.map((e) => (e.result.body.post as { id: string }).id);
    const rows = await t.orm.em.fork().execute<{ id: string; body: string }[]>('select id, body from post where id in (?)', [ids]);
    expect(ids.map((id) => rows.find((r) => r.id === id)?.body)).toEqual(bodies);
  });

  // Only the worker mints post ids, so a client's reply always names a post of an earlier batch.
  it('lets a reply in one batch answer a post created by the batch before it, taking its root and depth', async () => {
    const root = post(topic.owner);
    const {
      executions: [created],
    } = await run([root]);
    const rootId = (created!.result.body.post as { id: string }).id;
    const child = post(voters[0] as TestAgent, { parentPostId: rootId });
    const { executions } = await run([child]);
    expect(executions[0]?.result.body.post).toMatchObject({ parentPostId: rootId, rootPostId: rootId, depth: 1 });
  });

  it('applies a command that appears twice in one batch once, answering both with the first result', async () => {
    const id = randomUUID();
    const body = unique('twice ');
    const { executions, retries } = await run([post(topic.owner, { body }, id), post(topic.owner, { body }, id)]);
    expect(retries).toEqual([]);
    expect(executions[1]?.result).toEqual(executions[0]?.result);
    expect(executions.map((e) => e.outcome)).toEqual(['applied', 'replayed']);
    const rows = await t.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from post where body = ?', [body]);
    expect(rows[0]?.n).toBe(1);
  });

  it('keeps the tally and the counters exact across votes, re-casts and a missing post in one batch', async () => {
    const {
      executions: [created],
    } = await run([post(topic.owner)]);
    const postId = (created!.result.body.post as { id: string }).id;
    const [a, b, c] = voters as [TestAgent, TestAgent, TestAgent];
    const before = await t.orm.em
      .fork()
      .execute<{ id: string; votes_cast: number; support_received: number; contest_received: number }[]>(
        'select id, votes_cast, support_received, contest_received from agent where id in (?)',
        [[a.agentId, topic.owner.agentId]],
      );
    const { executions, retries } = await run([
      vote(a, postId, 'support'),
      vote(b, postId, 'support'),
      vote(c, 'pst_missing', 'support'),
      vote(a, postId, 'contest'),
      vote(c, postId, 'contest'),
    ]);
    expect(retries).toEqual([]);
    expect(executions.map((e) => e.result.status)).toEqual([200, 200, 404, 200, 200]);
    expect(executions.map((e) => e.result.body.tally)).toEqual([
      { support: 1, contest: 0 },
      { support: 2, contest: 0 },
      undefined,
      { support: 1, contest: 1 },
      { support: 1, contest: 2 },
    ]);
    const [stored] = await t.orm.em
      .fork()
      .execute<{ support_count: number; contest_count: number }[]>('select support_count, contest_count from post where id = ?', [postId]);
    expect(stored).toEqual({ support_count: 1, contest_count: 2 });
    const votes = await t.orm.em
      .fork()
      .execute<{ agent_id: string; value: string }[]>('select agent_id, value from vote where post_id = ? order by agent_id', [postId]);
    expect(votes).toHaveLength(3);
    expect(votes.find((v) => v.agent_id === a.agentId)?.value).toBe('contest');
    const after = await t.orm.em
      .fork()
      .execute<{ id: string; votes_cast: number; support_received: number; contest_received: number }[]>(
        'select id, votes_cast, support_received, contest_received from agent where id in (?)',
        [[a.agentId, topic.owner.agentId]],
      );
    const delta = (id: string, column: 'votes_cast' | 'support_received' | 'contest_received') =>
      (after.find((r) => r.id === id)?.[column] ?? 0) - (before.find((r) => r.id === id)?.[column] ?? 0);
    expect(delta(a.agentId, 'votes_cast')).toBe(1);
    expect(delta(topic.owner.agentId, 'support_received')).toBe(1);
    expect(delta(topic.owner.agentId, 'contest_received')).toBe(2);
  });

  it('publishes its events to the ledger with its own commit, in command order, and returns that publication', async () => {
    const posts = [post(topic.owner), post(voters[0] as TestAgent), post(voters[1] as TestAgent)];
    const { executions, publication, retries } = await run(posts);
    expect(retries).toEqual([]);
    const postIds = executions.map((e) => (e.result.body.post as { id: string }).id);
    // Only the batch's own publication can return these rows: it published them in its transaction.
    const rows = await t.orm.em
      .fork()
      .execute<{ event_id: string; subject_id: string }[]>(
        `select event_id::text as event_id, subject_id from ledger_event where type = 'post.created' and subject_id in (?) order by event_id`,
        [postIds],
      );
    expect(rows.map((r) => r.subject_id)).toEqual(postIds);
    const own = publication?.events.filter((e) => postIds.includes(e.subjectId ?? '')) ?? [];
    expect(own.map((e) => e.eventId)).toEqual(rows.map((r) => r.event_id));
    expect(publication?.head).toBe(publication?.events.at(-1)?.eventId);
    // Published with the commit, they never waited: no outbox row was written for them.
    const outboxed = await t.orm.em
      .fork()
      .execute<{ n: number }[]>('select count(*)::int as n from outbox_event where command_id in (?)', [posts.map((c) => c.commandId)]);
    expect(outboxed).toEqual([{ n: 0 }]);
  });

  it('waits for the ledger lock without blocking its holder from inserting a row that names an agent the batch has locked', async () => {
    const author = await registerAgent(t.client);
    const side = await openOrm(t.settings.databaseUrl, { poolMax: 2 });
    // The holder: a transaction with the ledger lock (as checkpoint prepare takes it) that will insert a follow by the author.
    const holder = side.em.fork();
    await beginHeld(holder);
    await holder.execute('select pg_advisory_xact_lock(?, ?)', [0x4c454447, 1]);
    const [{ pid: holderPid } = { pid: 0 }] = await holder.execute<{ pid: number }[]>('select pg_backend_pid() as pid');
    try {
      const batch = run([post(author)]);
      // The batch holds the author's row and waits for the ledger lock. Other files' batches may wait on that lock
      // too: this one is the transaction whose id locks the author's row (its xmax).
      await vi.waitFor(
        async () => {
          const blocked = await side.em
            .fork()
            .execute<{ n: number }[]>(
              'select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid)) and backend_xid = (select xmax from agent where id = ?)',
              [holderPid, author.agentId],
            );
          if ((blocked[0]?.n ?? 0) < 1) throw new Error('the batch is not waiting on the ledger lock yet');
        },
        { timeout: 10_000, interval: 20 },
      );
      // Its foreign-key check runs at commit (deferred) and needs a KEY SHARE lock on the author's row.
      await holder.execute(
        "insert into follow (id, agent_id, target_type, target_id, project_slug, created_at) values (?, ?, 'project', ?, ?, now())",
        [unique('flw_'), author.agentId, unique('prj_'), topic.projectSlug],
      );
      await holder.commit();
      const { executions, retries } = await batch;
      expect(retries).toEqual([]);
      expect(executions.map((e) => e.result.status)).toEqual([200]);
    } finally {
      await side.close();
    }
  });

  it('publishes one event per applied command and none for a refusal', async () => {
    const good = post(topic.owner);
    const bad = post(topic.owner, { topicSlug: 'nope' });
    // Nothing pending to claim: the publication holds the batch's own events alone.
    await publishAll(t.orm);
    const { executions, publication } = await run([good, bad]);
    expect(executions.map((e) => e.result.status)).toEqual([200, 404]);
    const postId = (executions[0]!.result.body.post as { id: string }).id;
    expect(publication?.events.map((e) => [e.type, e.subjectId])).toEqual([['post.created', postId]]);
  });

  it('folds follows and unfollows of one batch in order, without falling back to the per-command path', async () => {
    const [a, b] = voters as [TestAgent, TestAgent];
    const follow = (agent: TestAgent, data: Record<string, unknown>) => command(agent, 'follow.follow', data);
    const unfollow = (agent: TestAgent, data: Record<string, unknown>) => command(agent, 'follow.unfollow', data);
    const project = { targetType: 'project', projectSlug: topic.projectSlug };
    const topicTarget = { targetType: 'topic', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug };
    const { executions, retries } = await run([
      follow(a, project),
      follow(a, project),
      follow(b, { targetType: 'project', projectSlug: 'no-such-project-here' }),
      unfollow(b, project),
      follow(b, topicTarget),
      unfollow(b, topicTarget),
      follow(b, project),
    ]);
    expect(retries).toEqual([]);
    expect(executions.map((e) => e.result.status)).toEqual([200, 200, 404, 404, 200, 200, 200]);
    expect(executions.map((e) => e.result.body.following)).toEqual([true, true, undefined, undefined, true, false, true]);
    expect((executions[1]!.result.body.follow as { id: string }).id).toBe((executions[0]!.result.body.follow as { id: string }).id);
    const rows = await t.orm.em
      .fork()
      .execute<{ agent_id: string; target_type: string }[]>(
        'select agent_id, target_type from follow where agent_id in (?) order by agent_id, target_type',
        [[a.agentId, b.agentId]],
      );
    expect(rows).toEqual(
      [
        { agent_id: a.agentId, target_type: 'project' },
        { agent_id: b.agentId, target_type: 'project' },
      ].sort((x, y) => (x.agent_id < y.agent_id ? -1 : 1)),
    );
    const events = await t.orm.em
      .fork()
      .execute<{ type: string }[]>(
        "select type from ledger_event where type like ? and created_at >= now() - interval '1 minute' and project_slug = ? order by event_id",
        ['follow.%', topic.projectSlug],
      );
    expect(events.map((e) => e.type)).toEqual(['follow.created', 'follow.created', 'follow.removed', 'follow.created']);
  });

  it('locks every agent a batch may update in id order before anything else, so batches of two partitions cannot deadlock', async () => {
    const pair = await Promise.all([registerAgent(t.client), registerAgent(t.client)]);
    const [smaller, larger] = pair.sort((x, y) => (x.agentId < y.agentId ? -1 : 1)) as [TestAgent, TestAgent];
    // Other transactions on connections of their own (the test ORM's two run the batch).
    const side = await openOrm(t.settings.databaseUrl, { poolMax: 2 });
    // Another partition's batch holds the smaller agent.
    const holder = side.em.fork();
    await beginHeld(holder);
    await holder.execute('select 1 from agent where id = ? for update', [smaller.agentId]);
    const [{ pid: holderPid } = { pid: 0 }] = await holder.execute<{ pid: number }[]>('select pg_backend_pid() as pid');
    // A command without a set-based handler keeps this batch off the set-based path: its posts update their authors' counters one by one, larger first.
    const batch = run([command(larger, 'no.such.command', {}), post(larger), post(smaller)]);
    // Until the batch is blocked by the holder: only then does what it holds show what it locked first.
    await vi.waitFor(
      async () => {
        const blocked = await side.em
          .fork()
          .execute<{ n: number }[]>('select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [holderPid]);
        if ((blocked[0]?.n ?? 0) < 1) throw new Error('the batch is not waiting on the held agent yet');
      },
      { timeout: 10_000, interval: 20 },
    );
    const probe = side.em.fork();
    await probe.begin();
    try {
      // Waiting on the smaller agent, the batch must not hold the larger one: otherwise a batch locking larger then smaller deadlocks with it.
      await expect(probe.execute('select 1 from agent where id = ? for update nowait', [larger.agentId])).resolves.toHaveLength(1);
    } finally {
      await probe.rollback();
      await holder.rollback();
    }
    await side.close();
    const { executions, failures } = await batch;
    expect(failures).toEqual([]);
    expect(executions.map((e) => e.result.status)).toEqual([400, 200, 200]);
  });

  it('folds flags of one batch in order: a re-flag updates, the third distinct reporter quarantines the post once, a missing post is refused', async () => {
    const {
      executions: [created],
    } = await run([post(topic.owner)]);
    const postId = (created!.result.body.post as { id: string }).id;
    const [a, b, c] = voters as [TestAgent, TestAgent, TestAgent];
    const flag = (agent: TestAgent, data: Record<string, unknown>) => command(agent, 'flag.create', { postId, ...data });
    const { executions, retries } = await run([
      flag(a, { reasonCode: 'spam' }),
      flag(a, { reasonCode: 'spam' }),
      flag(b, { reasonCode: 'harassment' }),
      flag(a, { reasonCode: 'harassment', detail: 'changed my mind' }),
      command(c, 'flag.create', { postId: 'pst_no_such_post', reasonCode: 'spam' }),
      flag(c, { reasonCode: 'spam' }),
      flag(topic.owner, { reasonCode: 'other' }),
    ]);
    expect(retries).toEqual([]);
    expect(executions.map((e) => e.result.status)).toEqual([200, 200, 200, 200, 404, 200, 200]);
    expect(executions.map((e) => (e.result.body.post as { moderationState: string } | undefined)?.moderationState)).toEqual([
      'visible',
      'visible',
      'visible',
      'visible',
      undefined,
      'quarantined',
      'quarantined',
    ]);
    expect(executions[3]?.result.body.flag).toMatchObject({ reporter: a.handle, reasonCode: 'harassment', detail: 'changed my mind' });
    const flags = await t.orm.em
      .fork()
      .execute<{ reporter_id: string; reason_code: string }[]>(
        'select reporter_id, reason_code from flag where post_id = ? order by reporter_id',
        [postId],
      );
    expect(flags).toEqual(
      [
        { reporter_id: a.agentId, reason_code: 'harassment' },
        { reporter_id: b.agentId, reason_code: 'harassment' },
        { reporter_id: c.agentId, reason_code: 'spam' },
        { reporter_id: topic.owner.agentId, reason_code: 'other' },
      ].sort((x, y) => (x.reporter_id < y.reporter_id ? -1 : 1)),
    );
    const [stored] = await t.orm.em
      .fork()
      .execute<{ moderation_state: string; moderation_reason: string }[]>(
        'select moderation_state, moderation_reason from post where id = ?',
        [postId],
      );
    expect(stored).toEqual({ moderation_state: 'quarantined', moderation_reason: 'harassment' });
    const actions = await t.orm.em
      .fork()
      .execute<{ state: string; actor_id: string | null }[]>('select state, actor_id from moderation_action where post_id = ?', [postId]);
    expect(actions).toEqual([{ state: 'quarantined', actor_id: null }]);
    const events = await t.orm.em
      .fork()
      .execute<{ type: string }[]>('select type from ledger_event where subject_id = ? order by event_id', [postId]);
    expect(events.map((e) => e.type)).toEqual([
      'post.created',
      'flag.created',
      'flag.created',
      'flag.updated',
      'flag.created',
      'post.moderated',
      'flag.created',
    ]);
  });

  it('answers a post enqueued without a view field, as an older API would, in the compact view, without falling back', async () => {
    const { view: _view, ...older } = post(topic.owner);
    const { executions, failures, retries } = await run([older as Command, { ...post(topic.owner), view: 'full' }]);
    expect(failures).toEqual([]);
    expect(retries).toEqual([]);
    const [compact, full] = executions.map((e) => e.result.body.post as Record<string, unknown>);
    expect(compact).not.toHaveProperty('createdAt');
    expect(full).toHaveProperty('createdAt');
  });
});
