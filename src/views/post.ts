import type { Post } from '../entities/post.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import { moderationStates, stances } from '../entities/post.ts';
import Joi from 'joi';
import { integer, links, named, nullableText, nullableTimestamp, oneOf, record, tally, text } from './schema.ts';

/**
 * What the compact view reads of a post (moderationReason only for a
 * tombstone's text): a compact listing selects these columns alone. The two
 * dates, three ids and the author's key fingerprint it leaves out were six of
 * the twenty values pg decodes per row (docs/benchmarks.md).
 */
const compactPostProperties = [
  'id',
  'projectSlug',
  'topicSlug',
  'authorHandle',
  'parentPostId',
  'rootPostId',
  'depth',
  'stance',
  'body',
  'moderationState',
  'moderationReason',
  'reviewRequested',
  'supportCount',
  'contestCount',
] as const satisfies readonly (keyof Post)[];
export type CompactPost = Pick<Post, (typeof compactPostProperties)[number]>;

/** The properties a listing reads for `view`: the compact ones, or (undefined) all. */
export const postPropertiesFor = (view: View) => (view === 'full' ? undefined : compactPostProperties);

/** Hidden and removed posts keep id and metadata; only the body is replaced, with the public reason code. */
function publicBody(post: CompactPost): string {
  if (post.moderationState === 'hidden' || post.moderationState === 'removed')
    return `[${post.moderationState}: ${post.moderationReason ?? 'unspecified'}]`;
  return post.body;
}

/** A post as `view` shows it; the full view needs the whole post (a listing reads postPropertiesFor(view)). */
export function presentPost(post: Post | CompactPost, view: View) {
  return withFull(
    view,
    {
      id: post.id,
      projectSlug: post.projectSlug,
      topicSlug: post.topicSlug,
      author:
        view === 'full' && 'authorId' in post
          ? { id: post.authorId, handle: post.authorHandle, fingerprint: post.authorFingerprint }
          : { handle: post.authorHandle },
      parentPostId: post.parentPostId ?? null,
      rootPostId: post.rootPostId,
      depth: post.depth,
      stance: post.stance ?? null,
      body: publicBody(post),
      moderationState: post.moderationState,
      reviewRequested: post.reviewRequested,
      tally: { support: post.supportCount, contest: post.contestCount },
    },
    () => {
      if (!('authorId' in post)) throw new Error('the full view of a post needs all its columns');
      return {
        moderationReason: post.moderationReason ?? null,
        createdAt: iso(post.createdAt),
        updatedAt: iso(post.updatedAt),
        links: {
          self: `${forumBase}/posts?rootPostId=${post.rootPostId}`,
          thread: `${forumBase}/posts?rootPostId=${post.rootPostId}`,
          votes: `${forumBase}/votes?postId=${post.id}`,
          flags: `${forumBase}/flags?postId=${post.id}`,
        },
      };
    },
  );
}

export const postRecord = named(
  'Post',
  record(
    {
      id: text(),
      projectSlug: text(),
      topicSlug: text(),
      author: record({ handle: text() }, { id: text(), fingerprint: text() }),
      parentPostId: nullableText(),
      rootPostId: text(),
      depth: integer(),
      stance: oneOf(stances).allow(null),
      body: text(),
      moderationState: oneOf(moderationStates),
      reviewRequested: Joi.boolean(),
      tally: tally(),
    },
    { moderationReason: nullableText(), createdAt: nullableTimestamp(), updatedAt: nullableTimestamp(), links: links() },
  ),
);
