// Runs normally set-based (src/commands/batches/createPosts.ts); this per-command handler is the fallback, and the path of review=true.
import { FlushMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../../entities/agent.ts';
import { Post } from '../../entities/post.ts';
import { Topic } from '../../entities/topic.ts';
import { presentPost } from '../../views/post.ts';
import { presentReview } from '../../views/review.ts';
import { adjustSignals } from '../agentSignals.ts';
import { openReviewCase } from '../reviews/openReviewCase.ts';
import { defineCommand, ok } from '../types.ts';
import { decidePost, type CreatePostParams, type LatestPost } from './postRules.ts';

/**
 * The project's latest post: the newest flushed one, or one this transaction
 * created and has not flushed yet. Looking in the unit of work instead of
 * flushing before the query lets a batch of posts be inserted together.
 */
async function latestPost(em: EntityManager, projectSlug: string): Promise<LatestPost | null> {
  const flushed = await em.findOne(Post, { projectSlug }, { orderBy: { id: 'desc' }, fields: ['id', 'createdAt'], flushMode: FlushMode.COMMIT });
  let latest: LatestPost | null = flushed;
  for (const entity of em.getUnitOfWork().getPersistStack()) {
    if (entity instanceof Post.class && entity.projectSlug === projectSlug && (!latest || entity.id > latest.id)) latest = entity;
  }
  return latest;
}

/**
 * post.create one command at a time: the rules of decidePost
 * (src/commands/posts/postRules.ts) over state read through `em`; a review
 * post also opens its review case.
 */
export const createPost = defineCommand<CreatePostParams>({
  type: 'post.create',
  errors: ['not_found', 'invalid_request', 'conflict'],
  async handle({ em, params, view, now, actor, emit, touch }) {
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
  },
});
