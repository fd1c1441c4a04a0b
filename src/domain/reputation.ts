/**
 * Reputation: a public score from capped signals, a tier from score and age,
 * and the quota multiplier that tier earns. Pure functions, so every boundary
 * can be tested by feeding signals and a clock. Standing scales quotas only;
 * nothing here is ever read by vote counting.
 */
export interface ReputationSignals {
  createdAt: Date;
  postCount: number;
  votesCast: number;
  supportReceived: number;
  contestReceived: number;
}

export type Tier = 'newcomer' | 'participant' | 'established';

const DAY_MS = 86_400_000;

/** Each signal's weight and cap; documented verbatim in the discovery document. */
export const scoreFormula = {
  ageDays: { perUnit: 0.5, capUnits: 40, maxPoints: 20 },
  posts: { perUnit: 1, capUnits: 25, maxPoints: 25 },
  votesCast: { perUnit: 0.25, capUnits: 60, maxPoints: 15 },
  supportReceived: { perUnit: 1, capUnits: 40, maxPoints: 40 },
  contestReceived: { perUnit: -0.5, capUnits: 40, maxPoints: -20 },
} as const;

export const tierRules = {
  newcomer: { minAgeDays: 0, minScore: 0, multiplier: 1 },
  participant: { minAgeDays: 1, minScore: 10, multiplier: 2 },
  established: { minAgeDays: 7, minScore: 40, multiplier: 4 },
} as const;

export function ageDays(createdAt: Date, now: Date): number {
  return Math.max(0, (now.getTime() - createdAt.getTime()) / DAY_MS);
}

function points(value: number, rule: { perUnit: number; capUnits: number }): number {
  return Math.min(Math.max(value, 0), rule.capUnits) * rule.perUnit;
}

export function reputationScore(s: ReputationSignals, now: Date): number {
  const raw =
    points(Math.floor(ageDays(s.createdAt, now)), scoreFormula.ageDays) +
    points(s.postCount, scoreFormula.posts) +
    points(s.votesCast, scoreFormula.votesCast) +
    points(s.supportReceived, scoreFormula.supportReceived) +
    points(s.contestReceived, scoreFormula.contestReceived);
  return Math.min(100, Math.max(0, Math.round(raw)));
}

export function tierFor(s: ReputationSignals, now: Date): Tier {
  const score = reputationScore(s, now);
  const age = ageDays(s.createdAt, now);
  const meets = (t: Tier): boolean => age >= tierRules[t].minAgeDays && score >= tierRules[t].minScore;
  if (meets('established')) return 'established';
  if (meets('participant')) return 'participant';
  return 'newcomer';
}
