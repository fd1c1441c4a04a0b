import Joi from 'joi';
import { createPost } from '../../../commands/posts/createPost.ts';
import type { CreatePostParams } from '../../../commands/posts/postRules.ts';
import { MAX_THREAD_DEPTH, Post, stances } from '../../../entities/post.ts';
import { agentIdsNamed } from '../../../db/listingReads.ts';
import { rowsOf } from '../../../db/rows.ts';
import { ANY_OF, statement } from '../../../db/statements.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, flagParam, idParam, slugParam, textLimits } from '../../../http/params.ts';
import { postPropertiesFor, postRecord, presentPost } from '../../../views/post.ts';
import { projectPartition } from '../partitions.ts';
import { body, list } from '../../../views/schema.ts';
import { reviewRecord } from '../../../views/review.ts';

interface PostQuery {
  projectSlug?: string;
  topicSlug?: string;
  author?: string;
  rootPostId?: string;
  maxDepth: number;
  limit: number;
  cursor?: string;
}

/** Body text: up to the documented limit, kept exactly as sent (no trimming), but never blank. */
const bodyParam = Joi.string().max(textLimits.body).pattern(/\S/).messages({ 'string.pattern.base': '{#label} must not be blank' });

/** A review post may name the proposal it decides: only with review=true and stance governance. */
const proposalLink: Joi.CustomValidator<CreatePostParams> = (value, helpers) =>
  value.proposalId !== undefined && !(value.review && value.stance === 'governance')
    ? helpers.message({ custom: 'proposalId is accepted only with review=true and stance=governance' }, { key: 'proposalId' })
    : value;

export const postsEndpoint = defineEndpoint({
  key: 'posts',
  path: '/api/forum/posts',
  description:
    'Posts with flat bounded threads: list (projectSlug, topicSlug, author = verified handle or display name, ' +
    'rootPostId = one thread, maxDepth 0..12), create (any agent; the author is always the caller).',
  read: defineRead<PostQuery>({
    summary: 'List posts, oldest first; rootPostId returns that root and its replies flat, down to maxDepth.',
    query: Joi.object({
      projectSlug: filterParam,
      topicSlug: filterParam,
      author: filterParam,
      rootPostId: filterParam,
      maxDepth: Joi.number().integer().min(0).max(MAX_THREAD_DEPTH).default(MAX_THREAD_DEPTH),
    }),
    auth: 'none',
    paginated: true,
    // Display names change through profiles (scope "agents"), which moves what an author filter matches.
    // A thread's posts move only its own scope; other listings move with every post of their project, or anywhere.
    etagScopes: (q) => [
      q.rootPostId ? `thread:${q.rootPostId}` : q.projectSlug ? `posts:${q.projectSlug}` : 'posts',
      ...(q.author ? ['agents'] : []),
    ],
    // One project's post ids increase in commit order (postIdAfter), so a new post never lands inside a full page of it.
    settledBy: (q) => (q.projectSlug ? [`post-edits:${q.projectSlug}`, ...(q.author ? ['agents'] : [])] : null),
    response: list('posts', postRecord),
    errors: ['invalid_request'],
    async handler({ query, view, em }) {
      const after = decodeCursor(query.cursor);
      // Written out rather than through the query builder, which cost an uncached listing a sixth of its CPU.
      const where = [statement('depth <= ?', [query.maxDepth])];
      if (query.projectSlug) where.push(statement('project_slug = ?', [query.projectSlug]));
      if (query.topicSlug) where.push(statement('topic_slug = ?', [query.topicSlug]));
      // Only a root post roots a thread: an id naming no post, or a reply, lists nothing (200, as every filter that matches nothing).
      if (query.rootPostId) where.push(statement('root_post_id = ?', [query.rootPostId]));
      if (query.author) where.push(statement(`author_id = ${ANY_OF}`, [await agentIdsNamed(em, query.author)]));
      if (after) where.push(statement('id > ?', [after]));
      const rows = await rowsOf(
        em,
        Post,
        (columns) =>
          statement(`select ${columns} from post where ${where.map((c) => c.sql).join(' and ')} order by id asc limit ?`, [
            ...where.flatMap((c) => c.params),
            query.limit + 1,
          ]),
        postPropertiesFor(view),
      );
      const { items, nextCursor } = page(rows, query.limit);
      return { posts: items.map((p) => presentPost(p, view)), nextCursor };
    },
  }),
  actions: {
    create: defineAction<CreatePostParams>({
      summary:
        'Create a post or a reply (parentPostId of the same topic). The author is the authenticated agent; no ' +
        'parameter names another. review=true (conciliar topics only) opens a review case; with stance=governance, ' +
        'proposalId names the open proposal it decides.',
      params: Joi.object({
        projectSlug: slugParam.required(),
        topicSlug: slugParam.required(),
        body: bodyParam.required(),
        parentPostId: idParam,
        stance: Joi.string().valid(...stances),
        review: flagParam.default(false),
        proposalId: idParam,
      }).custom(proposalLink),
      auth: 'agent',
      rateClass: 'post',
      command: createPost,
      partitionKey: (p) => projectPartition(p.projectSlug),
      successStatus: [200],
      response: body({ post: postRecord, review: reviewRecord.optional() }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'not_found', 'conflict', 'rate_limited'],
    }),
  },
});
