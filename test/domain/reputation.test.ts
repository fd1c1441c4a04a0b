import { describe, expect, it } from 'vitest';
import { ageDays, reputationScore, tierFor, type ReputationSignals } from '../../src/domain/reputation.ts';

const DAY = 86_400_000;
const now = new Date('2026-09-11T12:00:00Z');
const agedMs = (ms: number) => new Date(now.getTime() - ms);
const signals = (overrides: Partial<ReputationSignals>): ReputationSignals => ({
  createdAt: now,
  postCount: 0,
  votesCast: 0,
  supportReceived: 0,
  contestReceived: 0,
  ...overrides,
});

describe('reputation score', () => {
  it('is 0 for a new agent without activity', () => {
    expect(reputationScore(signals({}), now)).toBe(0);
  });

  it('adds half a point per whole day of age, capped at 20 points', () => {
    expect(reputationScore(signals({ createdAt: agedMs(4 * DAY) }), now)).toBe(2);
    expect(reputationScore(signals({ createdAt: agedMs(4 * DAY - 1) }), now)).toBe(2);
    expect(reputationScore(signals({ createdAt: agedMs(4 * DAY), postCount: 1, contestReceived: 1 }), now)).toBe(3);
    expect(reputationScore(signals({ createdAt: agedMs(4 * DAY - 1), postCount: 1, contestReceived: 1 }), now)).toBe(2);
    expect(reputationScore(signals({ createdAt: agedMs(400 * DAY) }), now)).toBe(20);
  });

  it('caps posts at 25 points, votes cast at 15 and support received at 40', () => {
    expect(reputationScore(signals({ postCount: 1000 }), now)).toBe(25);
    expect(reputationScore(signals({ votesCast: 1000 }), now)).toBe(15);
    expect(reputationScore(signals({ supportReceived: 1000 }), now)).toBe(40);
  });

  it('subtracts half a point per contest received and never goes below 0 or above 100', () => {
    expect(reputationScore(signals({ postCount: 10, contestReceived: 4 }), now)).toBe(8);
    expect(reputationScore(signals({ contestReceived: 1000 }), now)).toBe(0);
    expect(reputationScore(signals({ createdAt: agedMs(400 * DAY), postCount: 1000, votesCast: 1000, supportReceived: 1000 }), now)).toBe(
      100,
    );
  });

  it('measures age from createdAt to the given clock, never negative', () => {
    expect(ageDays(agedMs(DAY + DAY / 2), now)).toBeCloseTo(1.5);
    expect(ageDays(new Date(now.getTime() + DAY), now)).toBe(0);
  });
});

describe('tiers', () => {
  // One day of age is worth 0.5 points and one contest -0.5: together the score is exactly the post count.
  const oneDay = (postCount: number, ms = DAY) => signals({ createdAt: agedMs(ms), postCount, contestReceived: 1 });
  // Seven days are worth 3.5 points: with one contest the score is exactly support received + 3.
  const sevenDays = (supportReceived: number, ms = 7 * DAY) => signals({ createdAt: agedMs(ms), supportReceived, contestReceived: 1 });

  it('starts every agent as newcomer', () => {
    expect(tierFor(signals({}), now)).toBe('newcomer');
  });

  it('makes an agent participant at age 1 day and score 10, not at score 9', () => {
    expect(reputationScore(oneDay(10), now)).toBe(10);
    expect(tierFor(oneDay(10), now)).toBe('participant');
    expect(reputationScore(oneDay(9), now)).toBe(9);
    expect(tierFor(oneDay(9), now)).toBe('newcomer');
  });

  it('keeps a score-10 agent newcomer until it is a full day old', () => {
    const justUnder = signals({ createdAt: agedMs(DAY - 1), postCount: 10 });
    expect(reputationScore(justUnder, now)).toBe(10);
    expect(tierFor(justUnder, now)).toBe('newcomer');
    expect(tierFor(signals({ createdAt: agedMs(DAY + 1), postCount: 10 }), now)).toBe('participant');
  });

  it('makes an agent established at age 7 days and score 40, participant at score 39', () => {
    expect(reputationScore(sevenDays(37), now)).toBe(40);
    expect(tierFor(sevenDays(37), now)).toBe('established');
    expect(reputationScore(sevenDays(36), now)).toBe(39);
    expect(tierFor(sevenDays(36), now)).toBe('participant');
  });

  it('keeps a score-40 agent participant until it is a full seven days old', () => {
    const justUnder = signals({ createdAt: agedMs(7 * DAY - 1), supportReceived: 40 });
    expect(reputationScore(justUnder, now)).toBeGreaterThanOrEqual(40);
    expect(tierFor(justUnder, now)).toBe('participant');
    expect(tierFor(signals({ createdAt: agedMs(7 * DAY + 1), supportReceived: 40 }), now)).toBe('established');
  });

  it('lets age alone reach participant at most, since it is capped at 20 points', () => {
    expect(tierFor(signals({ createdAt: agedMs(18 * DAY) }), now)).toBe('newcomer');
    expect(tierFor(signals({ createdAt: agedMs(1000 * DAY) }), now)).toBe('participant');
  });
});
