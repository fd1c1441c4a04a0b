import type { Vote } from '../entities/vote.ts';
import { iso, withFull, type View } from './view.ts';

export function presentVote(vote: Vote, view: View) {
  return withFull(
    view,
    { id: vote.id, postId: vote.postId, voter: vote.agentHandle, value: vote.value, rationale: vote.rationale ?? null },
    () => ({ createdAt: iso(vote.createdAt), updatedAt: iso(vote.updatedAt) }),
  );
}
