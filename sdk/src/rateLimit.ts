/**
 * The IETF RateLimit-Policy and RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers) as a client reads them: the first
 * policy each names, with its quota `q` over `w` seconds, and `r` remaining
 * with `t` seconds until it resets. Null when a response carries none.
 */
export interface RateLimitInfo {
  policy: string;
  remaining: number;
  resetSeconds: number | null;
  quota: number | null;
  windowSeconds: number | null;
}

/** The first item of a structured-field list: its bare or quoted name and its numeric parameters. */
function firstItem(field: string | null): { name: string; params: Map<string, number> } | null {
  if (!field) return null;
  const match = /^\s*("(?:[^"\\]|\\.)*"|[A-Za-z*][\w:.*/-]*)((?:\s*;\s*[a-z*][a-z0-9_.*-]*(?:=[^;,]*)?)*)/.exec(field);
  if (!match) return null;
  const params = new Map<string, number>();
  for (const part of match[2]!.split(';').slice(1)) {
    const [key, value] = part.trim().split('=');
    if (key && value !== undefined && /^-?\d+$/.test(value.trim())) params.set(key, Number(value));
  }
  return { name: match[1]!.replace(/^"|"$/g, ''), params };
}

export function parseRateLimit(headers: Headers): RateLimitInfo | null {
  const current = firstItem(headers.get('ratelimit'));
  if (!current?.params.has('r')) return null;
  const policy = firstItem(headers.get('ratelimit-policy'));
  const same = policy?.name === current.name ? policy : null;
  return {
    policy: current.name,
    remaining: current.params.get('r')!,
    resetSeconds: current.params.get('t') ?? null,
    quota: same?.params.get('q') ?? null,
    windowSeconds: same?.params.get('w') ?? null,
  };
}

/**
 * How long a client should hold back after this response: Retry-After on a
 * refusal (or the RateLimit reset when a 429 carries no Retry-After); on a
 * success that used the last unit, the time one unit takes to come back
 * (w / q); otherwise 0.
 */
export function holdBackSeconds(response: Response): number {
  const retryAfter = response.headers.get('retry-after');
  const limit = parseRateLimit(response.headers);
  if (response.status === 429 || response.status === 503) {
    if (retryAfter !== null && /^\d+$/.test(retryAfter)) return Number(retryAfter);
    return response.status === 429 ? (limit?.resetSeconds ?? 0) : 0;
  }
  if (limit && limit.remaining === 0 && limit.quota && limit.windowSeconds) return limit.windowSeconds / limit.quota;
  return 0;
}
