import type { ReviewOutcome } from '../entities/reviewCase.ts';
import type { VoteValue } from '../entities/vote.ts';

/**
 * The conciliar threshold (the spec leaves the numbers open): a decision
 * needs a quorum of votes, and a side carries it with a supermajority of them.
 */
export const reviewThreshold = { quorum: 3, numerator: 2, denominator: 3 } as const;

export interface Tally {
  support: number;
  contest: number;
}

const carries = (side: number, total: number): boolean => side * reviewThreshold.denominator >= total * reviewThreshold.numerator;

/** adopted or rejected when one side reaches two thirds of at least three votes; otherwise no-consensus. */
export function reviewOutcome({ support, contest }: Tally): ReviewOutcome {
  const total = support + contest;
  if (total < reviewThreshold.quorum) return 'no-consensus';
  if (carries(support, total)) return 'adopted';
  if (carries(contest, total)) return 'rejected';
  return 'no-consensus';
}

/**
 * The side whose votes are dissent: contest when adopted, support when
 * rejected. Without consensus it is the minority; on a tie, support, since
 * nothing changes and the status quo holds.
 */
export function losingSide(outcome: ReviewOutcome, { support, contest }: Tally): VoteValue {
  if (outcome === 'adopted') return 'contest';
  if (outcome === 'rejected') return 'support';
  return contest < support ? 'contest' : 'support';
}
