// The normal path of vote.cast; the fallback is src/commands/votes/castVote.ts, per command.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ANY_OF, insertRows, recordsOf, statement, distinct, type Statement } from '../../db/statements.ts';
import { Vote } from '../../entities/vote.ts';
import type { Command } from '../../pipeline/command.ts';
import type { SignalChange } from '../agentSignals.ts';
import { requireActor } from '../types.ts';
import { castVote } from '../votes/castVote.ts';
import type { CastVoteParams } from '../votes/voteRules.ts';
import { decideVote, voteAnswer, type VotedPost } from '../votes/voteRules.ts';
import { signalWrites } from './signals.ts';
import { refusal, type Decision, type LoadedRows, type SetBasedHandler } from './types.ts';

const paramsOf = (command: Command) => command.data as unknown as CastVoteParams;
const voteKey = (postId: string, agentId: string) => `${postId}/${agentId}`;

interface PostRow {
  id: string;
  author_id: string;
  project_slug: string;
  topic_slug: string;
  support_count: number;
  contest_count: number;
}
function reads(commands: Command[]): Record<string, Statement> {
  const postIds = distinct(commands.map((c) => paramsOf(c).postId));
  return {
    posts: statement(`select id, author_id, project_slug, topic_slug, support_count, contest_count from post where id = ${ANY_OF}`, [postIds]),
    votes: statement(`select id, post_id, agent_id, agent_handle, value, rationale, created_at, updated_at from vote where post_id = ${ANY_OF} and agent_id = ${ANY_OF}`, [
      postIds,
      distinct(commands.map((c) => requireActor(c.actor).agentId)),
    ]),
  };
}

/** The run's posts and the voters' current votes; `isNew` marks a vote this run inserts. */
function stateOf(em: EntityManager, rows: LoadedRows) {
  return {
    posts: new Map((rows.posts as PostRow[]).map((p): [string, VotedPost] => [p.id, { id: p.id, authorId: p.author_id, projectSlug: p.project_slug, topicSlug: p.topic_slug, supportCount: p.support_count, contestCount: p.contest_count }])),
    votes: new Map(recordsOf(em, Vote, rows.votes ?? []).map((vote) => [voteKey(vote.postId, vote.agentId), { vote, isNew: false }])),
    /** Ids of the loaded votes re-cast in this run, and of the posts whose tally changed. */
    recast: new Set<string>(),
    retallied: new Set<string>(),
  };
}
type State = ReturnType<typeof stateOf>;

/**
 * vote.cast for a whole run of commands: decideVote
 * (src/commands/votes/voteRules.ts) folded in order over loaded posts and
 * votes, so several votes on one post in one batch leave the exact tally.
 */
export const castVotes: SetBasedHandler = {
  type: castVote.type,
  accepts: () => true,
  reads,
  decide(em, commands, rows, now) {
    const state = stateOf(em, rows);
    const signals: SignalChange[] = [];
    const decisions = commands.map((command): Decision => {
      const params = paramsOf(command);
      const voter = requireActor(command.actor);
      const key = voteKey(params.postId, voter.agentId);
      const decision = decideVote({ post: state.posts.get(params.postId) ?? null, vote: state.votes.get(key)?.vote ?? null }, params, voter, now);
      if (decision.kind === 'refused') return refusal(command, decision.error);
      if (decision.kind === 'created') {
        state.votes.set(key, { vote: decision.vote, isNew: true });
      } else {
        Object.assign(decision.vote, decision.changes);
        state.recast.add(decision.vote.id);
      }
      if (decision.tally) {
        Object.assign(decision.post, decision.tally);
        state.retallied.add(decision.post.id);
      }
      signals.push(...decision.signals);
      return { command, result: { status: 200, body: voteAnswer(decision.vote, decision.post, command.view) }, outcome: 'applied', events: [decision.event], touched: decision.touched };
    });
    const counters = signalWrites(signals);
    for (const decision of decisions) if (decision.outcome === 'applied') decision.touched.push(...counters.touched);
    return { decisions, writes: [...voteWrites(em, state, now), ...counters.writes] };
  },
};

/** New votes in one insert, re-cast ones in one update, tallies in one update. */
function voteWrites(em: EntityManager, state: State, now: Date): Statement[] {
  const all = [...state.votes.values()];
  const inserted = all.filter((v) => v.isNew).map((v) => v.vote);
  // A vote inserted by this run carries its re-casts already.
  const updated = all.filter((v) => !v.isNew && state.recast.has(v.vote.id)).map((v) => v.vote);
  const tallies = [...state.posts.values()].filter((p) => state.retallied.has(p.id));
  const writes: Statement[] = [];
  if (inserted.length > 0) writes.push(insertRows(em, Vote, inserted));
  if (updated.length > 0) {
    writes.push(
      statement('update vote v set value = x.value, rationale = x.rationale, updated_at = ? from json_to_recordset(?::json) as x(id text, value text, rationale text) where v.id = x.id', [
        now,
        JSON.stringify(updated.map((v) => ({ id: v.id, value: v.value, rationale: v.rationale ?? null }))),
      ]),
    );
  }
  if (tallies.length > 0) {
    writes.push(
      statement('update post p set support_count = x.support, contest_count = x.contest, updated_at = ? from json_to_recordset(?::json) as x(id text, support int, contest int) where p.id = x.id', [
        now,
        JSON.stringify(tallies.map((p) => ({ id: p.id, support: p.supportCount, contest: p.contestCount }))),
      ]),
    );
  }
  return writes;
}
