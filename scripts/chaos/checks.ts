/**
 * What Postgres holds after a chaos run, against what the load had acknowledged: nothing lost, nothing applied
 * twice, every vote at its last acknowledged value, no ledger gap, the outbox drained.
 */
import type { Orm } from '../../src/db/orm.ts';
import type { WriteLoad } from './load.ts';
import { lastVotes, voteFindings, type AcknowledgedVote } from './votes.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface StoreFindings {
  lost: number;
  /** Votes whose value, or posts whose tally, is not what the last acknowledged votes make it. */
  wrongVotes: number;
  appliedTwice: number;
  ledgerGaps: number;
  unpublished: number;
}

export async function storeFindings(orm: Orm, load: WriteLoad): Promise<StoreFindings> {
  const em = orm.em.fork();
  const keys = async (sql: string) => new Set((await em.execute<{ k: string }[]>(sql)).map((r) => r.k));
  const posts = await keys('select id as k from post');
  const lostPosts = load.acknowledged.posts.filter((p) => !posts.has(p.id)).length;
  const follows = await keys("select agent_id || '/' || project_slug as k from follow");
  const lostFollows = load.acknowledged.follows.filter((f) => !follows.has(`${f.agentId}/${f.projectSlug}`)).length;
  const flags = await keys("select post_id || '/' || reporter_id as k from flag");
  const lostFlags = load.acknowledged.flags.filter((f) => !flags.has(`${f.postId}/${f.agentId}`)).length;
  const expected = lastVotes(load.acknowledged.votes);
  const votes = await em.execute<AcknowledgedVote[]>('select post_id as "postId", agent_id as "agentId", value from vote');
  const tallies = await em.execute<{ id: string; supportCount: number; contestCount: number }[]>(
    'select id, support_count as "supportCount", contest_count as "contestCount" from post',
  );
  const voteCheck = voteFindings(expected, votes, tallies);
  const [twicePosts] = await em.execute<{ n: number }[]>(
    'select count(*)::int as n from (select body from post group by body having count(*) > 1) d',
  );
  // A command's events written twice: among outbox rows (the per-command paths'), and among posts' creations, which
  // batches of hot commands publish straight into the ledger with no outbox row (one per post, whatever retried).
  const [twiceCommands] = await em.execute<{ n: number }[]>(
    'select count(*)::int as n from (select command_id from outbox_event group by command_id, type, subject_id having count(*) > 1) d',
  );
  const [twiceCreated] = await em.execute<{ n: number }[]>(
    "select count(*)::int as n from (select subject_id from ledger_event where type = 'post.created' group by subject_id having count(*) > 1) d",
  );
  const [gaps] = await em.execute<{ n: number }[]>(
    'select count(*)::int as n from (select event_id, lag(event_id) over (order by event_id) as previous from ' +
      'ledger_event) e where e.event_id <> coalesce(e.previous, 0) + 1',
  );
  let unpublished = -1;
  for (let i = 0; i < 300; i++) {
    const [row] = await em.execute<{ n: number }[]>('select count(*)::int as n from outbox_event where published_at is null');
    unpublished = row?.n ?? 0;
    if (unpublished === 0) break;
    await pause(100);
  }
  return {
    lost: lostPosts + voteCheck.lost + lostFollows + lostFlags,
    wrongVotes: voteCheck.wrongValue + voteCheck.wrongTally,
    appliedTwice: (twicePosts?.n ?? 0) + (twiceCommands?.n ?? 0) + (twiceCreated?.n ?? 0),
    ledgerGaps: gaps?.n ?? 0,
    unpublished,
  };
}
