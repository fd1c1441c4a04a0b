import type { EntityManager } from '@mikro-orm/postgresql';
import { Vote, type VoteValue } from '../../entities/vote.ts';
import { notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Command } from '../../pipeline/command.ts';
import { presentVote } from '../../views/vote.ts';
import type { SignalChange } from '../agentSignals.ts';
import { postScopes } from '../posts/postLookup.ts';
import { requireActor } from '../types.ts';
import { castVote, type CastVoteParams } from '../votes/castVote.ts';
import { applySignals } from './signals.ts';
import { refusal, type Decision, type SetBasedHandler } from './types.ts';

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

async function load(em: EntityManager, commands: Command[]) {
  const postIds = [...new Set(commands.map((c) => paramsOf(c).postId))];
  const [posts, votes] = await Promise.all([
    em.execute<{ id: string; author_id: string; project_slug: string; topic_slug: string; support_count: number; contest_count: number }[]>(
      'select id, author_id, project_slug, topic_slug, support_count, contest_count from post where id in (?)',
      [postIds],
    ),
    em.execute<{ id: string; post_id: string; agent_id: string; agent_handle: string; value: VoteValue; rationale: string | null; created_at: string; updated_at: string }[]>(
      'select id, post_id, agent_id, agent_handle, value, rationale, created_at, updated_at from vote where post_id in (?) and agent_id in (?)',
      [postIds, [...new Set(commands.map((c) => requireActor(c.actor).agentId))]],
    ),
  ]);
  // Plain records, not managed entities: the unit of work must not write them a second time.
  const asVote = (v: (typeof votes)[number]) =>
    ({ id: v.id, postId: v.post_id, agentId: v.agent_id, agentHandle: v.agent_handle, value: v.value, rationale: v.rationale, createdAt: new Date(v.created_at), updatedAt: new Date(v.updated_at) }) as Vote;
  return {
    posts: new Map(posts.map((p): [string, PostState] => [p.id, { id: p.id, authorId: p.author_id, projectSlug: p.project_slug, topicSlug: p.topic_slug, support: p.support_count, contest: p.contest_count, changed: false }])),
    votes: new Map(votes.map((v) => [voteKey(v.post_id, v.agent_id), { vote: asVote(v), isNew: false }])),
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
  async apply(em, commands, now) {
    const state = await load(em, commands);
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
    await writeVotes(em, state, now);
    const agentScopes = await applySignals(em, signals);
    for (const decision of decisions) if (decision.outcome === 'applied') decision.touched.push(...agentScopes);
    return decisions;
  },
};

/** New votes in one insert, re-cast ones in one update, tallies in one update. */
async function writeVotes(em: EntityManager, state: Awaited<ReturnType<typeof load>>, now: Date): Promise<void> {
  const all = [...state.votes.values()];
  const inserted = all.filter((v) => v.isNew).map((v) => v.vote);
  const updated = all.filter((v) => !v.isNew && v.vote.updatedAt === now).map((v) => v.vote);
  const tallies = [...state.posts.values()].filter((p) => p.changed);
  if (inserted.length > 0) await em.insertMany(Vote, inserted);
  if (updated.length > 0) {
    await em.execute(
      'update vote v set value = x.value, rationale = x.rationale, updated_at = ? from json_to_recordset(?::json) as x(id text, value text, rationale text) where v.id = x.id',
      [now, JSON.stringify(updated.map((v) => ({ id: v.id, value: v.value, rationale: v.rationale ?? null })))],
    );
  }
  if (tallies.length > 0) {
    await em.execute(
      'update post p set support_count = x.support, contest_count = x.contest, updated_at = ? from json_to_recordset(?::json) as x(id text, support int, contest int) where p.id = x.id',
      [now, JSON.stringify(tallies.map((p) => ({ id: p.id, support: p.support, contest: p.contest })))],
    );
  }
}
