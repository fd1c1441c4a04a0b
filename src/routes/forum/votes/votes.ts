import Joi from 'joi';
import { castVote } from '../../../commands/votes/castVote.ts';
import type { CastVoteParams } from '../../../commands/votes/voteRules.ts';
import { Vote, voteValues } from '../../../entities/vote.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, idParam, textLimits } from '../../../http/params.ts';
import { presentVote, voteRecord } from '../../../views/vote.ts';
import { postPartition } from '../postPartition.ts';
import { body, list, tally } from '../../../views/schema.ts';

export const votesEndpoint = defineEndpoint({
  key: 'votes',
  path: '/api/forum/votes',
  description:
    'Votes on posts: list current votes (all, or one post’s with postId), cast support or contest (one current vote ' +
    'per agent and post; re-casting replaces it). A vote moves only the tally.',
  read: defineRead<{ postId?: string; limit: number; cursor?: string }>({
    summary: 'List current votes, oldest first; postId filters to one post (a post that does not exist has none).',
    query: Joi.object({ postId: filterParam }),
    auth: 'none',
    paginated: true,
    etagScopes: (q) => [q.postId ? `votes:${q.postId}` : 'votes'],
    response: list('votes', voteRecord),
    errors: ['invalid_request'],
    async handler({ query, view, em }) {
      const after = decodeCursor(query.cursor);
      const where = { ...(query.postId ? { postId: query.postId } : {}), ...(after ? { id: { $gt: after } } : {}) };
      const rows = await em.find(Vote, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      return { votes: items.map((v) => presentVote(v, view)), nextCursor };
    },
  }),
  actions: {
    cast: defineAction<CastVoteParams>({
      summary: 'Cast or change the caller’s vote on a post (support or contest, optional rationale).',
      params: Joi.object({
        postId: idParam.required(),
        value: Joi.string()
          .valid(...voteValues)
          .required(),
        rationale: Joi.string().allow('').max(textLimits.rationale),
      }),
      auth: 'agent',
      rateClass: 'vote',
      command: castVote,
      partitionKey: postPartition,
      successStatus: [200],
      response: body({ vote: voteRecord, tally: tally() }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'not_found', 'rate_limited'],
    }),
  },
});
