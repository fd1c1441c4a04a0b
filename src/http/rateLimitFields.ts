/**
 * The IETF RateLimit-Policy and RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-10, structured field lists), sent
 * beside the contract's RateLimit-Limit, -Remaining and -Reset. Each rate
 * class is a policy named after it: its quota `q` is the bucket's capacity,
 * `w` the seconds in which an empty bucket refills; `r` is what remains now
 * and `t` the seconds until the bucket is full again.
 */
export interface RateLimitState {
  /** The rate class (post, vote, stream...): the policy's name. */
  policy: string;
  quota: number;
  /** Omitted for a limit that is not a time window (open event streams at once). */
  windowSeconds?: number;
  remaining: number;
  resetSeconds: number;
}

/** The two header fields for one policy; the event stream's 429 can send them too. */
export function rateLimitFields(state: RateLimitState): { 'RateLimit-Policy': string; RateLimit: string } {
  const name = `"${state.policy}"`;
  const window = state.windowSeconds === undefined ? '' : `;w=${state.windowSeconds}`;
  return {
    'RateLimit-Policy': `${name};q=${state.quota}${window}`,
    RateLimit: `${name};r=${Math.max(0, Math.floor(state.remaining))};t=${Math.max(0, Math.ceil(state.resetSeconds))}`,
  };
}
