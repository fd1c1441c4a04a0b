/**
 * What Postgres must hold of the load's votes: a re-cast changes a vote in place, so its pair existing proves
 * nothing; the value must be the last one acknowledged, and each post's tally must count those values.
 */
import type { VoteValue } from '../../src/entities/vote.ts';

export interface AcknowledgedVote {
  postId: string;
  agentId: string;
  value: VoteValue;
}

const pair = (vote: { postId: string; agentId: string }) => `${vote.postId}/${vote.agentId}`;

/**
 * Each pair's last acknowledged value. Acknowledgements are listed in the order they came, and one agent's
 * writes come one at a time (each waits for its answer), so a pair's last one is the one applied last.
 */
export function lastVotes(acknowledged: readonly AcknowledgedVote[]): Map<string, AcknowledgedVote> {
  return new Map(acknowledged.map((vote) => [pair(vote), vote]));
}

export interface VoteFindings {
  /** Acknowledged pairs with no vote row. */
  lost: number;
  /** Pairs whose row holds another value than the last acknowledged. */
  wrongValue: number;
  /** Voted posts whose support or contest count is not the number of their votes of that value. */
  wrongTally: number;
}

export function voteFindings(
  expected: ReadonlyMap<string, AcknowledgedVote>,
  rows: readonly AcknowledgedVote[],
  posts: readonly { id: string; supportCount: number; contestCount: number }[],
): VoteFindings {
  const stored = new Map(rows.map((row) => [pair(row), row.value]));
  let lost = 0;
  let wrongValue = 0;
  const tally = new Map<string, { support: number; contest: number }>();
  for (const [key, vote] of expected) {
    const value = stored.get(key);
    if (value === undefined) lost++;
    else if (value !== vote.value) wrongValue++;
    const counts = tally.get(vote.postId) ?? { support: 0, contest: 0 };
    counts[vote.value]++;
    tally.set(vote.postId, counts);
  }
  const wrongTally = posts.filter((post) => {
    const counts = tally.get(post.id);
    return counts !== undefined && (post.supportCount !== counts.support || post.contestCount !== counts.contest);
  }).length;
  return { lost, wrongValue, wrongTally };
}
