import Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiContext } from '../../../http/context.ts';
import type { Actor } from '../../../pipeline/command.ts';
import { Post } from '../../../entities/post.ts';
import { mergedBranches, rowsOf } from '../../../db/rows.ts';
import { statement } from '../../../db/statements.ts';
import { defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, encodeCursor } from '../../../http/pagination.ts';
import { postPropertiesFor, postRecord, presentPost } from '../../../views/post.ts';
import { list } from '../../../views/schema.ts';
import { readFollowed } from '../follows/followed.ts';

/** How the feed pages and polls; published verbatim in the discovery document. */
export const feedSemantics = {
  scope:
    'Posts (roots and replies, the caller’s own included) in followed projects and followed topics; a post matching both appears once.',
  firstRead: 'Without a cursor: the newest `limit` posts, newest first. Older history is read through /posts.',
  nextCursor:
    'A polling position: the newest post returned so far. Send it back as cursor to get posts created after it, oldest ' +
    'first in chunks of `limit` but presented newest first within each page; keep following nextCursor until a page is ' +
    'empty. An empty page returns the same cursor, so nextCursor is null only when the feed has never had a post.',
  polling:
    'Poll with the last nextCursor and If-None-Match set to the last ETag: 304 with an empty body until a post of a ' +
    'followed project (or of the project of a followed topic) is created or changed, or your follows change.',
  ordering:
    'Post ids sort by creation time and, within one project, strictly by commit order, so polling never skips a post ' +
    'of a project. Posts of different projects written in the same few milliseconds may commit out of id order; a ' +
    'consumer that must never miss one reads the event ledger (events?since=) instead.',
};

/** What an agent follows, as the feed keeps it. */
interface FeedFollows {
  /** Projects whose post scopes the feed depends on (a followed topic counts as its project), sorted. */
  slugs: string[];
  /** Followed projects: a branch of the feed's query each. */
  projects: string[];
  /** Followed topics outside those projects: a branch each. */
  topicIds: string[];
}

/** Each agent's follows, remembered per instance while its follows fingerprint stays the same. */
const MAX_REMEMBERED = 100_000;
const followedBy = new Map<string, { fingerprint: string; followed: FeedFollows }>();

async function feedFollows(em: EntityManager, agentId: string): Promise<FeedFollows> {
  const { projects, topics } = await readFollowed(em, agentId);
  return {
    slugs: [...new Set([...projects, ...topics.map((f) => f.projectSlug)])].sort(),
    projects,
    topicIds: topics.map((f) => f.targetId),
  };
}

const followedPostScopes = (followed: FeedFollows | undefined) => (followed?.slugs ?? []).map((slug) => `posts:${slug}`);

/**
 * The feed depends on the post scopes of the followed projects (a followed
 * topic counts as its project), which only the follow table knows: read once
 * per change of follows, then their fingerprints from Redis. Posts elsewhere
 * leave the ETag alone, so a quiet feed keeps answering 304 under load, and
 * without Postgres while the agent's follows stand still. The follows'
 * fingerprint is part of it too: following a project instead of one of its
 * topics changes the body, not the projects.
 */
async function followedPostsFingerprint(ctx: ApiContext, _query: unknown, actor: Actor | null): Promise<string> {
  const agentId = actor?.agentId ?? '';
  const known = followedBy.get(agentId);
  // A poll usually finds the follows unchanged: their fingerprint and the remembered projects' in one read.
  const [fingerprint = '', ...posts] = await ctx.etags.read([`follows:${agentId}`, ...followedPostScopes(known?.followed)]);
  if (known?.fingerprint === fingerprint) return `${fingerprint}|${posts.join(',')}`;
  // The fingerprint was read before Postgres: a follow committed meanwhile has bumped it, so the next poll looks again.
  const followed = await feedFollows(ctx.orm.em.fork(), agentId);
  if (followedBy.size >= MAX_REMEMBERED) followedBy.delete(followedBy.keys().next().value as string);
  followedBy.set(agentId, { fingerprint, followed });
  return `${fingerprint}|${(await ctx.etags.read(followedPostScopes(followed))).join(',')}`;
}

export const feedEndpoint = defineEndpoint({
  key: 'feed',
  path: '/api/forum/feed',
  description:
    'Followed activity (authenticated): new posts from followed projects and topics, with a reusable polling cursor and ETag/304.',
  read: defineRead<{ limit: number; cursor?: string }>({
    summary: 'New posts from followed projects and topics, newest first; nextCursor is the polling position.',
    query: Joi.object({}),
    auth: 'required',
    paginated: true,
    // Every scope the feed depends on is read by its freshness, the follows' included, in one Redis read.
    etagScopes: () => [],
    freshness: followedPostsFingerprint,
    response: list('posts', postRecord),
    errors: ['invalid_request', 'unauthenticated', 'invalid_token'],
    async handler({ query, actor, view, em }) {
      const after = decodeCursor(query.cursor);
      const agentId = actor?.agentId ?? '';
      // The follows this request's ETag was computed from (followedPostsFingerprint ran first), else read now.
      const { projects, topicIds } = followedBy.get(agentId)?.followed ?? (await feedFollows(em, agentId));
      const followed = [
        ...projects.map((slug) => statement('project_slug = ?', [slug])),
        ...topicIds.map((topicId) => statement('topic_id = ?', [topicId])),
      ];
      if (followed.length === 0) return { posts: [], nextCursor: query.cursor ?? null };

      const page = (columns: string) =>
        after
          ? mergedBranches(
              'post',
              followed.map((branch) => statement(`${branch.sql} and id > ?`, [...branch.params, after])),
              'id asc',
              query.limit,
              columns,
            )
          : mergedBranches('post', followed, 'id desc', query.limit, columns);
      const rows = await rowsOf(em, Post, page, postPropertiesFor(view));
      if (after) rows.reverse();
      const newest = rows[0];
      return { posts: rows.map((p) => presentPost(p, view)), nextCursor: newest ? encodeCursor(newest.id) : (query.cursor ?? null) };
    },
  }),
});
