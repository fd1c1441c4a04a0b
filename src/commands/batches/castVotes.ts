import type { EntityManager } from '@mikro-orm/postgresql';
import { ANY_OF, insertRows, recordsOf, statement, textArray, type Statement } from '../../db/statements.ts';
import { Vote, type VoteValue } from '../../entities/vote.ts';
import { notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Command } from '../../pipeline/command.ts';
import { presentVote } from '../../views/vote.ts';
import type { SignalChange } from '../agentSignals.ts';
import { postScopes } from '../posts/postLookup.ts';
import { requireActor } from '../types.ts';
import { castVote, type CastVoteParams } from '../votes/castVote.ts';
import { signalWrites } from './signals.ts';
import { refusal, type Decision, type LoadedRows, type SetBasedHandler } from './types.ts';

interface PostState {
  id: string;
  authorId: string;
  projectSlug: string;
  topicSlug: string;
  support: number;
  contest: number;
  changed: boolean;
}

const paramsOf = (command: Command) => command.data as unknown as CastVoteParams;
const voteKey = (postId: string, agentId: string) => `${postId}/${agentId}`;
const receivedSignal = { support: 'supportReceived', contest: 'contestReceived' } as const;

interface PostRow {
  id: string;
  author_id: string;
  project_slug: string;
  topic_slug: string;
  support_count: number;
  contest_count: number;
}
function reads(commands: Command[]): Record<string, Statement> {
  const postIds = textArray(commands.map((c) => paramsOf(c).postId));
  return {
    posts: statement(`select id, author_id, project_slug, topic_slug, support_count, contest_count from post where id = ${ANY_OF}`, [postIds]),
    votes: statement(`select id, post_id, agent_id, agent_handle, value, rationale, created_at, updated_at from vote where post_id = ${ANY_OF} and agent_id = ${ANY_OF}`, [
      postIds,
      textArray(commands.map((c) => requireActor(c.actor).agentId)),
    ]),
  };
}

type State = ReturnType<typeof stateOf>;

function stateOf(em: EntityManager, rows: LoadedRows) {
  return {
    posts: new Map((rows.posts as PostRow[]).map((p): [string, PostState] => [p.id, { id: p.id, authorId: p.author_id, projectSlug: p.project_slug, topicSlug: p.topic_slug, support: p.support_count, contest: p.contest_count, changed: false }])),
    votes: new Map(recordsOf(em, Vote, rows.votes ?? []).map((vote) => [voteKey(vote.postId, vote.agentId), { vote, isNew: false }])),
  };
}

/**
 * vote.cast for a whole run of commands: castVote's rules
 * (src/commands/votes/castVote.ts) folded in order over loaded posts and
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
      const post = state.posts.get(params.postId);
      if (!post) return refusal(command, notFound(`post ${params.postId}`));
      const key = voteKey(post.id, voter.agentId);
      const known = state.votes.get(key);
      const previousValue: VoteValue | null = known?.vote.value ?? null;
      const vote: Vote = known
        ? Object.assign(known.vote, { value: params.value, rationale: params.rationale ?? null, updatedAt: now })
        : ({ id: newId('vot', now.getTime()), postId: post.id, agentId: voter.agentId, agentHandle: voter.handle, value: params.value, rationale: params.rationale ?? null, createdAt: now, updatedAt: now } as Vote);
      if (!known) state.votes.set(key, { vote, isNew: true });
      const touched = ['votes', `votes:${post.id}`];
      if (previousValue === null) signals.push({ agentId: voter.agentId, votesCast: 1 });
      if (previousValue !== params.value) {
        if (previousValue) post[previousValue] -= 1;
        post[params.value] += 1;
        post.changed = true;
        if (post.authorId !== voter.agentId) {
          const authorChange: SignalChange = { agentId: post.authorId, [receivedSignal[params.value]]: 1 };
          if (previousValue) authorChange[receivedSignal[previousValue]] = -1;
          signals.push(authorChange);
        }
        touched.push(...postScopes(post.projectSlug));
      }
      return {
        command,
        result: { status: 200, body: { vote: presentVote(vote, params.view), tally: { support: post.support, contest: post.contest } } },
        outcome: 'applied',
        events: [{ type: 'vote.cast', projectSlug: post.projectSlug, topicSlug: post.topicSlug, subjectId: post.id, data: { voteId: vote.id, value: params.value, previousValue } }],
        touched,
      };
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
  const updated = all.filter((v) => !v.isNew && v.vote.updatedAt === now).map((v) => v.vote);
  const tallies = [...state.posts.values()].filter((p) => p.changed);
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
        JSON.stringify(tallies.map((p) => ({ id: p.id, support: p.support, contest: p.contest }))),
      ]),
    );
  }
  return writes;
}
