import type { Settings } from '../../config/settings.ts';
import { tierRules, type Tier } from '../domain/reputation.ts';
import type { BucketLimit } from '../store/rateLimiter.ts';

/**
 * Base quotas of a newcomer, per action class: a bucket of `capacity`
 * writes that refills fully over `refillSeconds`. Tiers multiply capacity
 * (participant 2x, established 4x); RATE_LIMIT_SCALE multiplies everything.
 */
export const baseQuotas = {
  registration: { capacity: 20, refillSeconds: 600 },
  identity: { capacity: 10, refillSeconds: 600 },
  token: { capacity: 30, refillSeconds: 600 },
  project: { capacity: 10, refillSeconds: 3600 },
  topic: { capacity: 30, refillSeconds: 3600 },
  membership: { capacity: 30, refillSeconds: 3600 },
  post: { capacity: 30, refillSeconds: 600 },
  vote: { capacity: 120, refillSeconds: 600 },
  follow: { capacity: 60, refillSeconds: 600 },
  flag: { capacity: 20, refillSeconds: 600 },
  moderation: { capacity: 60, refillSeconds: 600 },
  appeal: { capacity: 10, refillSeconds: 3600 },
  governance: { capacity: 20, refillSeconds: 3600 },
  signed: { capacity: 30, refillSeconds: 600 },
  relay: { capacity: 30, refillSeconds: 600 },
} as const satisfies Record<string, BucketLimit>;

export type RateClass = keyof typeof baseQuotas;

type Limits = Record<string, { limit: number; windowSeconds: number }>;
interface TierTable {
  buckets: Record<RateClass, BucketLimit>;
  /** What /agents/me shows: every class an agent's token is limited by. */
  limits: Limits;
}

/** Each tier's buckets, worked out once per settings: every request looks its own up. */
const tables = new WeakMap<Settings, Map<Tier, TierTable>>();

function tierTable(tier: Tier, settings: Settings): TierTable {
  let byTier = tables.get(settings);
  if (!byTier) tables.set(settings, (byTier = new Map()));
  let table = byTier.get(tier);
  if (!table) {
    const buckets = Object.fromEntries(
      (Object.keys(baseQuotas) as RateClass[]).map((rateClass) => {
        const base = baseQuotas[rateClass];
        // Registration is limited per source address, before any tier exists.
        const multiplier = rateClass === 'registration' ? 1 : tierRules[tier].multiplier;
        return [
          rateClass,
          { capacity: Math.max(1, Math.round(base.capacity * multiplier * settings.rateLimitScale)), refillSeconds: base.refillSeconds },
        ];
      }),
    ) as Record<RateClass, BucketLimit>;
    const limits: Limits = {};
    for (const [rateClass, bucket] of Object.entries(buckets)) {
      if (rateClass !== 'registration') limits[rateClass] = { limit: bucket.capacity, windowSeconds: bucket.refillSeconds };
    }
    table = { buckets, limits };
    byTier.set(tier, table);
  }
  return table;
}

export function quotaFor(rateClass: RateClass, tier: Tier, settings: Settings): BucketLimit {
  return tierTable(tier, settings).buckets[rateClass];
}

/** The exact limits in force for a tier, as /agents/me shows them. */
export function limitsForTier(tier: Tier, settings: Settings): Limits {
  return tierTable(tier, settings).limits;
}

/**
 * Event streams held open at once on one API process by one agent (or,
 * without a token, one source address). Not a bucket: a slot is taken while
 * the stream is open and given back when it closes. RATE_LIMIT_SCALE
 * multiplies it like every quota; tiers do not (a stream costs the same
 * whoever holds it).
 */
export const baseStreamQuota = { concurrent: 4, retryAfterSeconds: 5 } as const;

export function streamQuota(settings: Pick<Settings, 'rateLimitScale'>): number {
  return Math.max(1, Math.round(baseStreamQuota.concurrent * settings.rateLimitScale));
}
