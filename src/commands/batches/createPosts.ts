// The normal path of post.create without review; the fallback is src/commands/posts/createPost.ts, per command.
import { ANY_OF, insertRows, distinct, statement, type Statement } from '../../db/statements.ts';
import { Post } from '../../entities/post.ts';
import type { Command } from '../../pipeline/command.ts';
import { idFloor } from '../../ids.ts';
import { presentPost } from '../../views/post.ts';
import type { SignalChange } from '../agentSignals.ts';
import { createPost } from '../posts/createPost.ts';
import type { CreatePostParams } from '../posts/postRules.ts';
import { decidePost, type LatestPost, type PostAuthor, type PostParent, type PostTopic } from '../posts/postRules.ts';
import { requireActor } from '../types.ts';
import { signalWrites } from './signals.ts';
import { refusal, type Decision, type LoadedRows, type SetBasedHandler } from './types.ts';

interface TopicRow {
  id: string;
  project_id: string;
  project_slug: string;
  slug: string;
  review_mode: string;
}
interface ParentRow {
  id: string;
  topic_id: string;
  root_post_id: string;
  depth: number;
}
interface LatestRow {
  project_slug: string;
  id: string;
  created_at: string;
}

const topicKey = (projectSlug: string, topicSlug: string) => `${projectSlug}/${topicSlug}`;
const paramsOf = (command: Command) => command.data as unknown as CreatePostParams;

/** Everything a run of post.create commands refers to, one query per table. */
function reads(commands: Command[], now: Date): Record<string, Statement> {
  const params = commands.map(paramsOf);
  const projects = distinct(params.map((p) => p.projectSlug));
  return {
    topics: statement(`select id, project_id, project_slug, slug, review_mode from topic where project_slug = ${ANY_OF}`, [projects]),
    parents: statement(`select id, topic_id, root_post_id, depth from post where id = ${ANY_OF}`, [distinct(params.flatMap((p) => (p.parentPostId ? [p.parentPostId] : [])))]),
    authors: statement(`select id, handle, fingerprint from agent where id = ${ANY_OF}`, [distinct(commands.map((c) => requireActor(c.actor).agentId))]),
    // Only a post whose id sorts at or after an id minted now can push a new id later (postIdAfter):
    // with that floor the read touches a handful of index entries, not a project's every post.
    latest: statement(`select distinct on (project_slug) project_slug, id, created_at from post where project_slug = ${ANY_OF} and id >= ? order by project_slug, id desc`, [
      projects,
      idFloor('pst', now.getTime()),
    ]),
  };
}

/** The loaded rows in decidePost's shapes, keyed for lookup by command. */
function stateOf(rows: LoadedRows) {
  return {
    topics: new Map(
      (rows.topics as TopicRow[]).map((t): [string, PostTopic] => [topicKey(t.project_slug, t.slug), { id: t.id, projectId: t.project_id, projectSlug: t.project_slug, slug: t.slug, reviewMode: t.review_mode }]),
    ),
    parents: new Map((rows.parents as ParentRow[]).map((p): [string, PostParent] => [p.id, { id: p.id, topicId: p.topic_id, rootPostId: p.root_post_id, depth: p.depth }])),
    authors: new Map((rows.authors as PostAuthor[]).map((a) => [a.id, a])),
    latest: new Map((rows.latest as LatestRow[]).map((l): [string, LatestPost] => [l.project_slug, { id: l.id, createdAt: new Date(l.created_at) }])),
  };
}

/**
 * post.create for a whole run of commands: decidePost
 * (src/commands/posts/postRules.ts) folded in order over loaded state, so
 * a reply may name a post created earlier in the same batch.
 */
export const createPosts: SetBasedHandler = {
  type: createPost.type,
  // A review opens a review case: that stays on the per-command path.
  accepts: (command) => paramsOf(command).review !== true,
  reads,
  decide(em, commands, rows, now) {
    const state = stateOf(rows);
    const posts: Post[] = [];
    const signals: SignalChange[] = [];
    const decisions = commands.map((command): Decision => {
      const params = paramsOf(command);
      const topic = state.topics.get(topicKey(params.projectSlug, params.topicSlug)) ?? null;
      const decision = decidePost(
        {
          topic,
          parent: params.parentPostId ? (state.parents.get(params.parentPostId) ?? null) : null,
          author: state.authors.get(requireActor(command.actor).agentId) ?? null,
          latest: topic ? (state.latest.get(topic.projectSlug) ?? null) : null,
        },
        // accepts() let in only posts without review; the record says false even where the flag was left out.
        { ...params, review: false },
        now,
      );
      if (decision.kind === 'refused') return refusal(command, decision.error);
      posts.push(decision.post);
      signals.push(...decision.signals);
      // Later commands of the run mint ids after this post, and their replies may answer it.
      state.latest.set(decision.post.projectSlug, decision.latest);
      state.parents.set(decision.parent.id, decision.parent);
      return { command, result: { status: 200, body: { post: presentPost(decision.post, command.view) } }, outcome: 'applied', events: [decision.event], touched: decision.touched };
    });
    const counters = signalWrites(signals);
    for (const decision of decisions) if (decision.outcome === 'applied') decision.touched.push(...counters.touched);
    return { decisions, writes: [...(posts.length > 0 ? [insertRows(em, Post, posts)] : []), ...counters.writes] };
  },
};
