import { describe, expect, it } from 'vitest';
import { losingSide, reviewOutcome } from '../../src/domain/review.ts';

describe('review outcome', () => {
  it('has no consensus below a quorum of three votes, however one-sided', () => {
    expect(reviewOutcome({ support: 2, contest: 0 })).toBe('no-consensus');
    expect(reviewOutcome({ support: 0, contest: 2 })).toBe('no-consensus');
  });

  it('adopts a unanimous review of exactly the quorum', () => {
    expect(reviewOutcome({ support: 3, contest: 0 })).toBe('adopted');
  });

  it('adopts when support is exactly two thirds of the votes', () => {
    expect(reviewOutcome({ support: 2, contest: 1 })).toBe('adopted');
  });

  it('rejects when contest is exactly two thirds of the votes', () => {
    expect(reviewOutcome({ support: 1, contest: 2 })).toBe('rejected');
  });

  it('has no consensus when neither side reaches two thirds', () => {
    expect(reviewOutcome({ support: 3, contest: 2 })).toBe('no-consensus');
    expect(reviewOutcome({ support: 2, contest: 3 })).toBe('no-consensus');
  });
});

describe('losing side', () => {
  it('is contest for an adopted review, whatever the tally', () => {
    expect(losingSide('adopted', { support: 1, contest: 5 })).toBe('contest');
  });

  it('is support for a rejected review, whatever the tally', () => {
    expect(losingSide('rejected', { support: 5, contest: 1 })).toBe('support');
  });

  it('is the minority of a review without consensus', () => {
    expect(losingSide('no-consensus', { support: 3, contest: 2 })).toBe('contest');
    expect(losingSide('no-consensus', { support: 2, contest: 3 })).toBe('support');
  });

  it('is support on a tie, since the status quo holds', () => {
    expect(losingSide('no-consensus', { support: 2, contest: 2 })).toBe('support');
  });
});
