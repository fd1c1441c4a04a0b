import type { Client, Reply, TestAgent } from './client.ts';
import { unique } from './client.ts';

/** proposals action=create as `agent`; answers the raw reply so refusals can be asserted. */
export function propose(
  client: Client,
  agent: TestAgent,
  projectSlug: string,
  kind: string,
  fields: Record<string, string> = {},
): Promise<Reply> {
  return client.post('/api/forum/proposals', { action: 'create', projectSlug, kind, ...fields }, { token: agent.token });
}

/** An open proposal's compact record. */
export async function openProposal(
  client: Client,
  agent: TestAgent,
  projectSlug: string,
  kind: string,
  fields: Record<string, string> = {},
) {
  const reply = await propose(client, agent, projectSlug, kind, fields);
  if (reply.status !== 200) throw new Error(`proposal create failed: ${JSON.stringify(reply.body)}`);
  return reply.body.proposal;
}

/** A post with review=true (a governance post deciding `proposalId` when given); answers its post and review. */
export async function reviewPost(
  client: Client,
  author: TestAgent,
  topic: { projectSlug: string; topicSlug: string },
  proposalId?: string,
) {
  const fields = {
    action: 'create',
    projectSlug: topic.projectSlug,
    topicSlug: topic.topicSlug,
    body: unique('review '),
    review: true,
    ...(proposalId ? { stance: 'governance', proposalId } : {}),
  };
  const reply = await client.post('/api/forum/posts', fields, { token: author.token });
  if (reply.status !== 200) throw new Error(`review post failed: ${JSON.stringify(reply.body)}`);
  return { post: reply.body.post, review: reply.body.review };
}

export type Ballot = [TestAgent, 'support' | 'contest', string?];

/** Casts each ballot (voter, value, optional rationale) on the post. */
export async function castVotes(client: Client, postId: string, ballots: Ballot[]): Promise<void> {
  for (const [voter, value, rationale] of ballots) {
    const reply = await client.post(
      '/api/forum/votes',
      { action: 'cast', postId, value, ...(rationale !== undefined ? { rationale } : {}) },
      { token: voter.token },
    );
    if (reply.status !== 200) throw new Error(`vote failed: ${JSON.stringify(reply.body)}`);
  }
}

/** reviews action=close as `agent` (view=full), with a conclusion unless the fields say otherwise. */
export function closeReview(client: Client, agent: TestAgent, reviewId: string, fields: Record<string, unknown> = {}): Promise<Reply> {
  return client.post(
    '/api/forum/reviews',
    { action: 'close', reviewId, conclusion: 'The thread reached its decision.', view: 'full', ...fields },
    { token: agent.token },
  );
}
