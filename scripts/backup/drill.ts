/**
 * The restore drill (`npm run backup -- drill`) against the running topology: A posts with votes and a follow,
 * a checkpoint signed, T noted, B posts with their own follow and checkpoint, then the operator's mistake
 * (TRUNCATE post CASCADE), a restore to T, and the proof through the API that exactly A came back, that the
 * ledger verifies with every checkpoint signed by T, and that writes are acknowledged again. Prints the RTO
 * and RPO. With --seed N, N more posts are inserted first (one statement, in a project of their own), so the
 * figures are those of a database of that size.
 */
import { exportLedger } from '../../sdk/src/ledgerExport.ts';
import { Client, createProject, registerAgent, type TestAgent } from '../../test/support/client.ts';
import { createTopic } from '../../test/support/forum.ts';
import { prepare, sign } from '../../test/support/signedActions.ts';
import { postgresBin } from '../chaos/services.ts';
import { WriteLoad } from '../chaos/load.ts';
import type { PostgresState } from '../topology/postgresState.ts';
import { PatroniControl } from './patroni.ts';
import { recordPostmasters } from './repository.ts';
import { restoreTo } from './restore.ts';
import { refreshServices } from './services.ts';
import { contentFailures, ledgerFailures, untilWritable, type DrillWrites } from './drillChecks.ts';

const POSTS_PER_AUTHOR = 20;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function checkpoint(client: Client, witness: TestAgent, projectSlug: string): Promise<void> {
  const { signing } = await prepare(client, '/api/forum/checkpoints', witness, { projectSlug });
  const reply = await client.post(
    '/api/forum/checkpoints',
    { action: 'publish', projectSlug, ...sign(signing, witness.keys) },
    { token: witness.token },
  );
  if (reply.status !== 200) throw new Error(`checkpoint publish answered ${reply.status}: ${JSON.stringify(reply.body)}`);
}

/** Posts acknowledged through the API with a retry key each; throws on one that is not (the drill needs every one). */
async function writePosts(
  load: WriteLoad,
  authors: TestAgent[],
  topic: { projectSlug: string; topicSlug: string },
  n: number,
  tag: string,
) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const author = authors[i % authors.length] as TestAgent;
    const reply = await load.write(author, topic.projectSlug, '/api/forum/posts', {
      action: 'create',
      projectSlug: topic.projectSlug,
      topicSlug: topic.topicSlug,
      body: `drill ${tag} ${i}`,
    });
    const id = (reply?.post as { id?: string } | undefined)?.id;
    if (!id) throw new Error(`post ${tag} ${i} was not acknowledged (${JSON.stringify(load.counters.refusals)})`);
    ids.push(id);
  }
  return ids;
}

async function acknowledged(what: string, reply: Promise<Record<string, unknown> | null>): Promise<void> {
  if (!(await reply)) throw new Error(`${what} was not acknowledged`);
}

/** N posts in a project of their own, written as one statement on the leader: the bulk a restore has to bring back. */
async function seedPosts(patroni: PatroniControl, client: Client, load: WriteLoad, owner: TestAgent, n: number): Promise<void> {
  const topic = await createTopic(client, owner, await createProject(client, owner));
  const [template] = await writePosts(load, [owner], topic, 1, 'seed template');
  const leader = await patroni.leader();
  if (!leader) throw new Error('no leader to seed');
  await patroni.sql(
    leader,
    `insert into post (id, project_id, project_slug, topic_id, topic_slug, author_id, author_handle, author_fingerprint,
       parent_post_id, root_post_id, depth, body, stance, review_requested, moderation_state, support_count, contest_count, created_at, updated_at)
     select 'seed-' || lpad(n::text, 9, '0'), p.project_id, p.project_slug, p.topic_id, p.topic_slug, p.author_id, p.author_handle,
       p.author_fingerprint, null, 'seed-' || lpad(n::text, 9, '0'), 0, repeat('seeded body ', 20) || n, null, false, 'visible', 0, 0, now(), now()
     from generate_series(1, ${n}) n, (select * from post where id = '${template}') p`,
    'agora',
  );
}

export async function runDrill(
  pg: PostgresState & { baseUrl: string },
  options: { posts: number; seed: number },
  say: (line: string) => void,
) {
  const patroni = new PatroniControl(pg, postgresBin() ?? '');
  const client = new Client(pg.baseUrl);
  const load = new WriteLoad(pg.baseUrl);
  const owner = await registerAgent(client);
  const voter = await registerAgent(client);
  const bCount = Math.max(3, Math.ceil(options.posts / 3));
  // An agent may create 30 posts in 10 minutes and an address register 20 agents: the owner and the voter
  // write the posts, with more authors only for a drill of more than 40.
  const authors: TestAgent[] = [owner, voter];
  while (authors.length * POSTS_PER_AUTHOR < options.posts + bCount) authors.push(await registerAgent(client));
  if (options.seed > 0) {
    const seeding = Date.now();
    await seedPosts(patroni, client, load, owner, options.seed);
    say(`drill: ${options.seed} posts seeded in ${((Date.now() - seeding) / 1000).toFixed(1)} s`);
  }
  const topic = await createTopic(client, owner, await createProject(client, owner));
  const laterProject = await createProject(client, owner);
  say('drill: agents, projects and a topic created');
  // A: posts, a vote on each, a follow, a checkpoint over all of it.
  const before = await writePosts(load, authors, topic, options.posts, 'A');
  say(`drill: ${before.length} posts (A) acknowledged`);
  for (const postId of before)
    await acknowledged('a vote', load.write(voter, topic.projectSlug, '/api/forum/votes', { action: 'cast', postId, value: 'support' }));
  await acknowledged(
    'a follow',
    load.write(voter, topic.projectSlug, '/api/forum/follows', { action: 'follow', targetType: 'project', projectSlug: topic.projectSlug }),
  );
  await checkpoint(client, owner, topic.projectSlug);
  const lastKept = Date.now();
  await pause(200);
  const t = new Date();
  await pause(200);
  // B: what the restore must take away again.
  const after = await writePosts(load, authors.toReversed(), topic, bCount, 'B');
  await acknowledged(
    'a follow',
    load.write(voter, laterProject, '/api/forum/follows', { action: 'follow', targetType: 'project', projectSlug: laterProject }),
  );
  await checkpoint(client, owner, topic.projectSlug);
  const witnessed = await exportLedger(pg.baseUrl, topic.projectSlug);
  say(
    `drill: ${before.length} posts (A) with votes and a follow, T = ${t.toISOString()}, ${after.length} posts (B); ` +
      `${witnessed.checkpoints.length} checkpoints exported`,
  );
  const leader = await patroni.leader();
  if (!leader) throw new Error('no leader for the mistake');
  await patroni.sql(leader, 'truncate post cascade', 'agora');
  const gone = await client.get('/api/forum/posts', { projectSlug: topic.projectSlug, topicSlug: topic.topicSlug });
  say(`drill: TRUNCATE post CASCADE on ${leader.name}; the topic now lists ${gone.body?.posts?.length ?? '?'} posts`);

  const restoring = Date.now();
  const report = await restoreTo(pg, t, say);
  recordPostmasters();
  await refreshServices(say);
  const probes = new Set<string>();
  await untilWritable(async () => {
    const reply = await load.write(owner, topic.projectSlug, '/api/forum/posts', {
      action: 'create',
      projectSlug: topic.projectSlug,
      topicSlug: topic.topicSlug,
      body: `drill after ${Date.now()}`,
    });
    const id = (reply?.post as { id?: string } | undefined)?.id;
    if (id) probes.add(id);
    return Boolean(id);
  }, 300_000);
  const rtoMs = Date.now() - restoring;

  const writes: DrillWrites = {
    projectSlug: topic.projectSlug,
    topicSlug: topic.topicSlug,
    before: before.map((id) => ({ id, support: 1 })),
    after,
    followedBefore: topic.projectSlug,
    followedAfter: laterProject,
  };
  const failures = [
    ...(await contentFailures(client, voter, writes, probes)),
    ...(await ledgerFailures(pg.baseUrl, topic.projectSlug, witnessed, t)),
  ];
  for (const failure of failures) say(`FAIL ${failure}`);
  say(
    `drill: RTO ${(rtoMs / 1000).toFixed(1)} s (restore command ${(report.durationMs / 1000).toFixed(1)} s, then the first write acknowledged through the API)`,
  );
  say(
    `drill: RPO ${((t.getTime() - lastKept) / 1000).toFixed(1)} s (T minus the last write kept, acknowledged before ` +
      `T); ${failures.length === 0 ? 'nothing acknowledged before T lost' : 'see the failures above'}`,
  );
  say(failures.length === 0 ? 'drill: OK' : `drill: FAILED (${failures.length})`);
  return failures.length === 0 ? 0 : 1;
}
