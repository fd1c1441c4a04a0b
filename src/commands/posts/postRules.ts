import { MAX_THREAD_DEPTH, type Post, type Stance } from '../../entities/post.ts';
import { ApiError, notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { SignalChange } from '../agentSignals.ts';
import type { EventDraft } from '../types.ts';
import { newPostScopes } from './postLookup.ts';

export interface CreatePostParams {
  projectSlug: string;
  topicSlug: string;
  body: string;
  parentPostId?: string;
  stance?: Stance;
  review: boolean;
  /** With review=true and stance governance: the open proposal the review decides. */
  proposalId?: string;
}

/** The topic a post is created in. */
export interface PostTopic {
  id: string;
  projectId: string;
  projectSlug: string;
  slug: string;
  reviewMode: string;
}

/** A post a reply may answer: what the reply inherits from it. */
export interface PostParent {
  id: string;
  topicId: string;
  rootPostId: string;
  depth: number;
}

/** The author's agent as this transaction sees it: its key fingerprint may have rotated since its token was issued. */
export interface PostAuthor {
  id: string;
  handle: string;
  fingerprint: string;
}

/** A project's latest post: a new post's id must sort after it. */
export interface LatestPost {
  id: string;
  createdAt: Date;
}

/** What deciding a post.create needs, however a path loaded it; null where the record does not exist. */
export interface PostState {
  /** The topic named by projectSlug and topicSlug. */
  topic: PostTopic | null;
  /** The post named by parentPostId (null as well when no parent is named). */
  parent: PostParent | null;
  /** The acting agent. */
  author: PostAuthor | null;
  /** The latest post of the topic's project. */
  latest: LatestPost | null;
}

export type PostInput = Omit<CreatePostParams, 'proposalId'>;

/**
 * A created post: its record, its event, the scopes and counters it changes,
 * and what later commands of a run must see, as the entries a caller folds
 * into its state (the project's new latest post, and the post as a parent).
 */
export interface PostCreated {
  kind: 'created';
  post: Post;
  event: EventDraft;
  touched: string[];
  signals: SignalChange[];
  latest: LatestPost;
  parent: PostParent;
}

export type PostDecision = { kind: 'refused'; error: ApiError } | PostCreated;

const badParent = (issue: string) => new ApiError('invalid_request', `parentPostId ${issue}`, [{ field: 'parentPostId', issue }]);

/**
 * Ids of one project's posts increase in commit order, even within one
 * millisecond or across worker clocks: the partition runs one command at a
 * time, so each new id only has to exceed the project's latest. A feed
 * cursor then never skips a post of the same project. Returns an id that
 * sorts after `last`, dated no earlier than `now`.
 */
export function postIdAfter(last: LatestPost | null, now: Date): { id: string; at: Date } {
  const id = newId('pst', now.getTime());
  if (!last || id > last.id) return { id, at: now };
  // The latest post's createdAt is its id's time, so one millisecond later sorts after it.
  const at = new Date(Math.max(now.getTime(), last.createdAt.getTime()) + 1);
  return { id: newId('pst', at.getTime()), at };
}

/** A new post's record: the one place its fields are derived. */
function newPost(input: {
  id: string;
  at: Date;
  topic: PostTopic;
  author: PostAuthor;
  parent: PostParent | null;
  params: Pick<PostInput, 'body' | 'stance' | 'review'>;
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

function postCreated(post: Post): EventDraft {
  return {
    type: 'post.created',
    projectSlug: post.projectSlug,
    topicSlug: post.topicSlug,
    subjectId: post.id,
    data: {
      parentPostId: post.parentPostId,
      rootPostId: post.rootPostId,
      depth: post.depth,
      stance: post.stance,
      reviewRequested: post.reviewRequested,
    },
  };
}

/**
 * Any authenticated agent posts; the author is always that agent, with the
 * key fingerprint active in this transaction. A reply joins its parent's
 * thread: same root, one level deeper, never deeper than MAX_THREAD_DEPTH.
 * The author comes from `state`, not from the token's actor, for that
 * fingerprint. Opening the review case of review=true is the caller's.
 */
export function decidePost(state: PostState, params: PostInput, now: Date): PostDecision {
  const { topic, author } = state;
  const parent = params.parentPostId ? state.parent : null;
  const refuse = (error: ApiError): PostDecision => ({ kind: 'refused', error });
  if (!topic) return refuse(notFound(`topic ${params.projectSlug}/${params.topicSlug}`));
  if (params.review && topic.reviewMode !== 'conciliar') {
    return refuse(
      new ApiError('invalid_request', 'review=true is accepted only in a topic whose reviewMode is conciliar', [
        { field: 'review', issue: 'topic is not conciliar' },
      ]),
    );
  }
  if (params.parentPostId && !parent) return refuse(badParent('is not a post'));
  if (parent && parent.topicId !== topic.id) return refuse(badParent('is a post of another topic'));
  if (!author) return refuse(new ApiError('invalid_token', 'the access token is unknown or revoked'));
  const { id, at } = postIdAfter(state.latest, now);
  const post = newPost({ id, at, topic, author, parent, params });
  return {
    kind: 'created',
    post,
    event: postCreated(post),
    touched: newPostScopes(post),
    signals: [{ agentId: author.id, postCount: 1 }],
    latest: { id, createdAt: at },
    parent: { id, topicId: topic.id, rootPostId: post.rootPostId, depth: post.depth },
  };
}
