import { FlushMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ANY_OF, distinct, insertRows, statement } from '../../db/statements.ts';
import { Agent } from '../../entities/agent.ts';
import { Post } from '../../entities/post.ts';
import { Topic } from '../../entities/topic.ts';
import { idFloor } from '../../ids.ts';
import type { Command } from '../../pipeline/command.ts';
import { presentPost } from '../../views/post.ts';
import { presentReview } from '../../views/review.ts';
import { adjustSignals } from '../agentSignals.ts';
import { defineHotCommand, type LoadedRows } from '../hotCommand.ts';
import { openReviewCase } from '../reviews/openReviewCase.ts';
import { ok, requireActor, type CommandHandler } from '../types.ts';
import {
  decidePost,
  type CreatePostParams,
  type LatestPost,
  type PostAuthor,
  type PostCreated,
  type PostParent,
  type PostTopic,
} from './postRules.ts';

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

/** The loaded rows in decidePost's shapes, keyed for lookup by command, and the posts the run creates. */
function load(rows: LoadedRows) {
  return {
    topics: new Map(
      (rows.topics as TopicRow[]).map((t): [string, PostTopic] => [
        topicKey(t.project_slug, t.slug),
        { id: t.id, projectId: t.project_id, projectSlug: t.project_slug, slug: t.slug, reviewMode: t.review_mode },
      ]),
    ),
    parents: new Map(
      (rows.parents as ParentRow[]).map((p): [string, PostParent] => [
        p.id,
        { id: p.id, topicId: p.topic_id, rootPostId: p.root_post_id, depth: p.depth },
      ]),
    ),
    authors: new Map((rows.authors as PostAuthor[]).map((a) => [a.id, a])),
    latest: new Map(
      (rows.latest as LatestRow[]).map((l): [string, LatestPost] => [l.project_slug, { id: l.id, createdAt: new Date(l.created_at) }]),
    ),
    created: [] as Post[],
  };
}

/**
 * The project's latest post for a review post on the unit of work: the
 * newest flushed one, or one this transaction created and has not flushed
 * yet.
 */
async function latestPost(em: EntityManager, projectSlug: string): Promise<LatestPost | null> {
  const flushed = await em.findOne(
    Post,
    { projectSlug },
    { orderBy: { id: 'desc' }, fields: ['id', 'createdAt'], flushMode: FlushMode.COMMIT },
  );
  let latest: LatestPost | null = flushed;
  for (const entity of em.getUnitOfWork().getPersistStack()) {
    if (entity instanceof Post.class && entity.projectSlug === projectSlug && (!latest || entity.id > latest.id)) latest = entity;
  }
  return latest;
}

/**
 * A post on the unit of work: the path of a post that opens a review case
 * (review=true; the case is written through its entities), and of a post
 * in a batch with commands that are not hot.
 */
const onUnitOfWork: CommandHandler<CreatePostParams>['handle'] = async ({ em, params, view, now, actor, emit, touch }) => {
  const topic = await em.findOne(Topic, { projectSlug: params.projectSlug, slug: params.topicSlug });
  const parent = params.parentPostId ? await em.findOne(Post, { id: params.parentPostId }) : null;
  const author = await em.findOneOrFail(Agent, { id: actor().agentId });
  const latest = topic ? await latestPost(em, topic.projectSlug) : null;
  const decision = decidePost({ topic, parent, author, latest }, params, now);
  if (decision.kind === 'refused') throw decision.error;
  const post = em.create(Post, decision.post);
  emit(decision.event);
  const review = params.review ? await openReviewCase({ em, now, emit, touch }, post, params.proposalId) : null;
  touch(...decision.touched, ...(await adjustSignals(em, decision.signals)));
  return ok({ post: presentPost(post, view), ...(review ? { review: presentReview(review, view, { support: 0, contest: 0 }) } : {}) });
};

/**
 * post.create, a post or a reply: decidePost (./postRules.ts) over the
 * topics, parents, authors and each project's latest post, so a reply may
 * name a post created earlier in the same run. A post that asks for review
 * opens a review case: that one runs on the unit of work (`handle`).
 */
export const createPost = defineHotCommand<CreatePostParams, ReturnType<typeof load>, PostCreated>({
  type: 'post.create',
  errors: ['not_found', 'invalid_request', 'conflict'],
  accepts: (command) => paramsOf(command).review !== true,
  reads(commands, sentAt) {
    const params = commands.map(paramsOf);
    const projects = distinct(params.map((p) => p.projectSlug));
    return {
      topics: statement(`select id, project_id, project_slug, slug, review_mode from topic where project_slug = ${ANY_OF}`, [projects]),
      parents: statement(`select id, topic_id, root_post_id, depth from post where id = ${ANY_OF}`, [
        distinct(params.flatMap((p) => (p.parentPostId ? [p.parentPostId] : []))),
      ]),
      authors: statement(`select id, handle, fingerprint from agent where id = ${ANY_OF}`, [
        distinct(commands.map((c) => requireActor(c.actor).agentId)),
      ]),
      // Only a post whose id sorts at or after an id minted now can push a new id later (postIdAfter):
      // with that floor the read touches a handful of index entries, not a project's every post.
      latest: statement(
        `select distinct on (project_slug) project_slug, id, created_at from post where project_slug = ${ANY_OF} and id >= ? order by project_slug, id desc`,
        [projects, idFloor('pst', sentAt.getTime())],
      ),
    };
  },
  load: (_em, rows) => load(rows),
  decide(state, command, now) {
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
    if (decision.kind === 'refused') return decision;
    return {
      kind: 'applied',
      change: decision,
      body: { post: presentPost(decision.post, command.view) },
      events: [decision.event],
      touched: decision.touched,
      signals: decision.signals,
    };
  },
  // Later commands of the run mint ids after this post, and their replies may answer it.
  evolve(state, created) {
    state.created.push(created.post);
    state.latest.set(created.post.projectSlug, created.latest);
    state.parents.set(created.parent.id, created.parent);
  },
  writes: (em, state) => (state.created.length > 0 ? [insertRows(em, Post, state.created)] : []),
  handle: onUnitOfWork,
});
