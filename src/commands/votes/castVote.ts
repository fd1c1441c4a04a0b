import type { EntityManager } from '@mikro-orm/postgresql';
import { ANY_OF, distinct, insertRows, recordsOf, statement, type Statement } from '../../db/statements.ts';
import { Vote } from '../../entities/vote.ts';
import type { Command } from '../../pipeline/command.ts';
import { defineHotCommand, type LoadedRows } from '../hotCommand.ts';
import { requireActor } from '../types.ts';
import { decideVote, voteAnswer, type CastVoteParams, type VoteCast, type VotedPost } from './voteRules.ts';

const paramsOf = (command: Command) => command.data as unknown as CastVoteParams;
const voteKey = (postId: string, agentId: string) => `${postId}/${agentId}`;

interface PostRow {
  id: string;
  author_id: string;
  project_slug: string;
  topic_slug: string;
  root_post_id: string;
  support_count: number;
  contest_count: number;
}

/** The run's posts and the voters' current votes; `isNew` marks a vote this run inserts. */
function load(em: EntityManager, rows: LoadedRows) {
  return {
    posts: new Map(
      (rows.posts as PostRow[]).map((p): [string, VotedPost] => [
        p.id,
        {
          id: p.id,
          authorId: p.author_id,
          projectSlug: p.project_slug,
          topicSlug: p.topic_slug,
          rootPostId: p.root_post_id,
          supportCount: p.support_count,
          contestCount: p.contest_count,
        },
      ]),
    ),
    votes: new Map(recordsOf(em, Vote, rows.votes ?? []).map((vote) => [voteKey(vote.postId, vote.agentId), { vote, isNew: false }])),
    /** Ids of the loaded votes re-cast in this run, and of the posts whose tally changed. */
    recast: new Set<string>(),
    retallied: new Set<string>(),
  };
}
type State = ReturnType<typeof load>;

/** New votes in one insert, re-cast ones in one update, tallies in one update. */
function writes(em: EntityManager, state: State, now: Date): Statement[] {
  const all = [...state.votes.values()];
  const inserted = all.filter((v) => v.isNew).map((v) => v.vote);
  // A vote inserted by this run carries its re-casts already.
  const updated = all.filter((v) => !v.isNew && state.recast.has(v.vote.id)).map((v) => v.vote);
  const tallies = [...state.posts.values()].filter((p) => state.retallied.has(p.id));
  const statements: Statement[] = [];
  if (inserted.length > 0) statements.push(insertRows(em, Vote, inserted));
  if (updated.length > 0) {
    statements.push(
      statement(
        'update vote v set value = x.value, rationale = x.rationale, updated_at = ? from json_to_recordset(?::json) as ' +
          'x(id text, value text, rationale text) where v.id = x.id',
        [now, JSON.stringify(updated.map((v) => ({ id: v.id, value: v.value, rationale: v.rationale ?? null })))],
      ),
    );
  }
  if (tallies.length > 0) {
    statements.push(
      statement(
        'update post p set support_count = x.support, contest_count = x.contest, updated_at = ? from ' +
          'json_to_recordset(?::json) as x(id text, support int, contest int) where p.id = x.id',
        [now, JSON.stringify(tallies.map((p) => ({ id: p.id, support: p.supportCount, contest: p.contestCount })))],
      ),
    );
  }
  return statements;
}

/**
 * vote.cast: decideVote (./voteRules.ts) over the loaded posts and votes,
 * so several votes on one post in one run leave the exact tally.
 */
export const castVote = defineHotCommand<CastVoteParams, State, VoteCast>({
  type: 'vote.cast',
  errors: ['not_found'],
  accepts: () => true,
  reads(commands) {
    const postIds = distinct(commands.map((c) => paramsOf(c).postId));
    return {
      posts: statement(
        `select id, author_id, project_slug, topic_slug, root_post_id, support_count, contest_count from post where id = ${ANY_OF}`,
        [postIds],
      ),
      votes: statement(
        `select id, post_id, agent_id, agent_handle, value, rationale, created_at, updated_at from vote where post_id = ${ANY_OF} and agent_id = ${ANY_OF}`,
        [postIds, distinct(commands.map((c) => requireActor(c.actor).agentId))],
      ),
    };
  },
  load,
  decide(state, command, now) {
    const params = paramsOf(command);
    const voter = requireActor(command.actor);
    const decision = decideVote(
      { post: state.posts.get(params.postId) ?? null, vote: state.votes.get(voteKey(params.postId, voter.agentId))?.vote ?? null },
      params,
      voter,
      now,
    );
    if (decision.kind === 'refused') return decision;
    // The answer shows the vote and the tally as evolve leaves them.
    const vote = decision.kind === 'recast' ? { ...decision.vote, ...decision.changes } : decision.vote;
    const body = voteAnswer(vote, { ...decision.post, ...decision.tally }, command.view);
    return { kind: 'applied', change: decision, body, events: [decision.event], touched: decision.touched, signals: decision.signals };
  },
  evolve(state, cast) {
    if (cast.kind === 'created') {
      state.votes.set(voteKey(cast.vote.postId, cast.vote.agentId), { vote: cast.vote, isNew: true });
    } else {
      Object.assign(cast.vote, cast.changes);
      state.recast.add(cast.vote.id);
    }
    if (cast.tally) {
      Object.assign(cast.post, cast.tally);
      state.retallied.add(cast.post.id);
    }
  },
  writes,
});
