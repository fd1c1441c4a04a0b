import { ANY_OF, insertRows, textArray, statement, type Statement } from '../../db/statements.ts';
import { Post } from '../../entities/post.ts';
import { ApiError, notFound } from '../../errors.ts';
import type { Command } from '../../pipeline/command.ts';
import { idFloor } from '../../ids.ts';
import { presentPost } from '../../views/post.ts';
import type { SignalChange } from '../agentSignals.ts';
import { badParent, createPost, newPost, postCreated, postIdAfter, type CreatePostParams } from '../posts/createPost.ts';
import { postScopes } from '../posts/postLookup.ts';
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
interface AuthorRow {
  id: string;
  handle: string;
  fingerprint: string;
}

const topicKey = (projectSlug: string, topicSlug: string) => `${projectSlug}/${topicSlug}`;
const paramsOf = (command: Command) => command.data as unknown as CreatePostParams;

/** Everything a run of post.create commands refers to, one query per table. */
function reads(commands: Command[], now: Date): Record<string, Statement> {
  const params = commands.map(paramsOf);
  const projects = textArray(params.map((p) => p.projectSlug));
  return {
    topics: statement(`select id, project_id, project_slug, slug, review_mode from topic where project_slug = ${ANY_OF}`, [projects]),
    parents: statement(`select id, topic_id, root_post_id, depth from post where id = ${ANY_OF}`, [textArray(params.flatMap((p) => (p.parentPostId ? [p.parentPostId] : [])))]),
    authors: statement(`select id, handle, fingerprint from agent where id = ${ANY_OF}`, [textArray(commands.map((c) => requireActor(c.actor).agentId))]),
    // Only a post whose id sorts at or after an id minted now can push a new id later (postIdAfter):
    // with that floor the read touches a handful of index entries, not a project's every post.
    latest: statement(`select distinct on (project_slug) project_slug, id, created_at from post where project_slug = ${ANY_OF} and id >= ? order by project_slug, id desc`, [
      projects,
      idFloor('pst', now.getTime()),
    ]),
  };
}

function stateOf(rows: LoadedRows) {
  return {
    topics: new Map((rows.topics as TopicRow[]).map((t) => [topicKey(t.project_slug, t.slug), t])),
    parents: new Map((rows.parents as ParentRow[]).map((p) => [p.id, p])),
    authors: new Map((rows.authors as AuthorRow[]).map((a) => [a.id, a])),
    latest: new Map((rows.latest as LatestRow[]).map((l) => [l.project_slug, { id: l.id, createdAt: new Date(l.created_at) }])),
  };
}

/**
 * post.create for a whole run of commands: the same rules as createPost
 * (src/commands/posts/createPost.ts), decided in order over loaded state, so
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
      const topic = state.topics.get(topicKey(params.projectSlug, params.topicSlug));
      if (!topic) return refusal(command, notFound(`topic ${params.projectSlug}/${params.topicSlug}`));
      const parent = params.parentPostId ? state.parents.get(params.parentPostId) : undefined;
      if (params.parentPostId && !parent) return refusal(command, badParent('is not a post'));
      if (parent && parent.topic_id !== topic.id) return refusal(command, badParent('is a post of another topic'));
      const author = state.authors.get(requireActor(command.actor).agentId);
      if (!author) return refusal(command, new ApiError('invalid_token', 'the access token is unknown or revoked'));
      const { id, at } = postIdAfter(state.latest.get(topic.project_slug) ?? null, now);
      const post = newPost({
        id,
        at,
        topic: { id: topic.id, projectId: topic.project_id, projectSlug: topic.project_slug, slug: topic.slug },
        author,
        parent: parent ? { id: parent.id, rootPostId: parent.root_post_id, depth: parent.depth } : null,
        params: { ...params, review: false },
      });
      posts.push(post);
      state.latest.set(topic.project_slug, { id, createdAt: at });
      // Later replies in this batch may answer this post.
      state.parents.set(id, { id, topic_id: topic.id, root_post_id: post.rootPostId, depth: post.depth });
      signals.push({ agentId: author.id, postCount: 1 });
      const event = postCreated(post);
      return { command, result: { status: 200, body: { post: presentPost(post, params.view) } }, outcome: 'applied', events: [event], touched: postScopes(topic.project_slug) };
    });
    const counters = signalWrites(signals);
    for (const decision of decisions) if (decision.outcome === 'applied') decision.touched.push(...counters.touched);
    return { decisions, writes: [...(posts.length > 0 ? [insertRows(em, Post, posts)] : []), ...counters.writes] };
  },
};
