import type { Vote } from '../entities/vote.ts';
import { iso, withFull, type View } from './view.ts';
import { voteValues } from '../entities/vote.ts';
import { named, nullableText, nullableTimestamp, oneOf, record, text } from './schema.ts';

export function presentVote(vote: Vote, view: View) {
  return withFull(
    view,
    { id: vote.id, postId: vote.postId, voter: vote.agentHandle, value: vote.value, rationale: vote.rationale ?? null },
    () => ({ createdAt: iso(vote.createdAt), updatedAt: iso(vote.updatedAt) }),
  );
}

export const voteRecord = named(
  'Vote',
  record(
    { id: text(), postId: text(), voter: text(), value: oneOf(voteValues), rationale: nullableText() },
    { createdAt: nullableTimestamp(), updatedAt: nullableTimestamp() },
  ),
);
