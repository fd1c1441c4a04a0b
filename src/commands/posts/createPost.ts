import { FlushMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../../entities/agent.ts';
import { MAX_THREAD_DEPTH, Post, type Stance } from '../../entities/post.ts';
import { Topic } from '../../entities/topic.ts';
import { ApiError, notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { View } from '../../views/view.ts';
import { presentPost } from '../../views/post.ts';
import { presentReview } from '../../views/review.ts';
import { adjustSignals } from '../agentSignals.ts';
import { openReviewCase } from '../reviews/openReviewCase.ts';
import { defineCommand, ok, type EventDraft } from '../types.ts';
import { postScopes } from './postLookup.ts';

export interface CreatePostParams {
  projectSlug: string;
  topicSlug: string;
  body: string;
  parentPostId?: string;
  stance?: Stance;
  review: boolean;
  /** With review=true and stance governance: the open proposal the review decides. */
  proposalId?: string;
  view: View;
}

/**
 * The project's latest post: the newest flushed one, or one this transaction
 * created and has not flushed yet. Looking in the unit of work instead of
 * flushing before the query lets a batch of posts be inserted together.
 */
async function latestPost(em: EntityManager, projectSlug: string): Promise<{ id: string; createdAt: Date } | null> {
  const flushed = await em.findOne(Post, { projectSlug }, { orderBy: { id: 'desc' }, fields: ['id', 'createdAt'], flushMode: FlushMode.COMMIT });
  let latest: { id: string; createdAt: Date } | null = flushed;
  for (const entity of em.getUnitOfWork().getPersistStack()) {
    if (entity instanceof Post.class && entity.projectSlug === projectSlug && (!latest || entity.id > latest.id)) latest = entity;
  }
  return latest;
}

/**
 * Ids of one project's posts increase in commit order, even within one
 * millisecond or across worker clocks: the partition runs one command at a
 * time, so each new id only has to exceed the project's latest. A feed
 * cursor then never skips a post of the same project.
 */
async function nextPostId(em: EntityManager, projectSlug: string, now: Date): Promise<{ id: string; at: Date }> {
  return postIdAfter(await latestPost(em, projectSlug), now);
}

/** The next post id of a project whose latest post is `last`: sorts after it, dated no earlier than `now`. */
export function postIdAfter(last: { id: string; createdAt: Date } | null, now: Date): { id: string; at: Date } {
  const id = newId('pst', now.getTime());
  if (!last || id > last.id) return { id, at: now };
  // The latest post's createdAt is its id's time, so one millisecond later sorts after it.
  const at = new Date(Math.max(now.getTime(), last.createdAt.getTime()) + 1);
  return { id: newId('pst', at.getTime()), at };
}

/** A new post's record: the one place its fields are derived, for this handler and the set-based one. */
export function newPost(input: {
  id: string;
  at: Date;
  topic: { id: string; projectId: string; projectSlug: string; slug: string };
  author: { id: string; handle: string; fingerprint: string };
  parent: { id: string; rootPostId: string; depth: number } | null;
  params: Pick<CreatePostParams, 'body' | 'stance' | 'review'>;
}): Post {
  const { id, at, topic, author, parent, params } = input;
  return {
    id,
    projectId: topic.projectId,
    projectSlug: topic.projectSlug,
    topicId: topic.id,
    topicSlug: topic.slug,
    authorId: author.id,
    authorHandle: author.handle,
    authorFingerprint: author.fingerprint,
    parentPostId: parent?.id ?? null,
    rootPostId: parent?.rootPostId ?? id,
    depth: parent ? Math.min(parent.depth + 1, MAX_THREAD_DEPTH) : 0,
    body: params.body,
    stance: params.stance ?? null,
    reviewRequested: params.review,
    moderationState: 'visible',
    moderationReason: null,
    supportCount: 0,
    contestCount: 0,
    createdAt: at,
    updatedAt: at,
  } as Post;
}

export function postCreated(post: Post): EventDraft {
  return {
    type: 'post.created',
    projectSlug: post.projectSlug,
    topicSlug: post.topicSlug,
    subjectId: post.id,
    data: { parentPostId: post.parentPostId, rootPostId: post.rootPostId, depth: post.depth, stance: post.stance, reviewRequested: post.reviewRequested },
  };
}

export const badParent = (issue: string) => new ApiError('invalid_request', `parentPostId ${issue}`, [{ field: 'parentPostId', issue }]);

/**
 * Any authenticated agent posts; the author is always that agent, with the
 * key fingerprint active in this transaction. A reply joins its parent's
 * thread: same root, one level deeper, never deeper than MAX_THREAD_DEPTH.
 */
export const createPost = defineCommand<CreatePostParams>({
  type: 'post.create',
  async handle({ em, params, now, actor, emit, touch }) {
    const topic = await em.findOne(Topic, { projectSlug: params.projectSlug, slug: params.topicSlug });
    if (!topic) throw notFound(`topic ${params.projectSlug}/${params.topicSlug}`);
    if (params.review && topic.reviewMode !== 'conciliar') {
      throw new ApiError('invalid_request', 'review=true is accepted only in a topic whose reviewMode is conciliar', [{ field: 'review', issue: 'topic is not conciliar' }]);
    }
    let parent: Post | null = null;
    if (params.parentPostId) {
      parent = await em.findOne(Post, { id: params.parentPostId });
      if (!parent) throw badParent('is not a post');
      if (parent.topicId !== topic.id) throw badParent('is a post of another topic');
    }
    const author = await em.findOneOrFail(Agent, { id: actor().agentId });
    const { id, at } = await nextPostId(em, topic.projectSlug, now);
    const post = em.create(Post, newPost({ id, at, topic, author, parent, params }));
    emit(postCreated(post));
    const review = params.review ? await openReviewCase({ em, now, emit, touch }, post, params.proposalId) : null;
    touch(...postScopes(topic.projectSlug), ...(await adjustSignals(em, [{ agentId: author.id, postCount: 1 }])));
    return ok({ post: presentPost(post, params.view), ...(review ? { review: presentReview(review, params.view, { support: 0, contest: 0 }) } : {}) });
  },
});
