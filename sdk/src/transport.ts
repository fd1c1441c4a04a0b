import { holdBackSeconds, parseRateLimit, type RateLimitInfo } from './rateLimit.ts';

/**
 * The fetch every SDK request goes through: the bearer token, an
 * Idempotency-Key on every POST (kept across its retries, so a retried write
 * applies once), and retries on 503 and 429 that wait what Retry-After says.
 */
export interface ResponseInfo {
  method: string;
  url: string;
  status: number;
  attempt: number;
  /** The response's RateLimit fields, when it carries them. */
  rateLimit: RateLimitInfo | null;
}

export interface TransportOptions {
  token?: string | undefined;
  /** Attempts per request, the first included (default 5). */
  maxAttempts?: number;
  /** Upper bound of one wait between attempts, in milliseconds (default 30 000). */
  maxWaitMs?: number;
  /** The fetch to call (default: the global one). */
  fetch?: typeof fetch;
  /** The statuses retried (default 429 and 503); a load generator that paces itself on 429 retries 503 only. */
  retryOn?: readonly number[];
  /** Called for every response, retried ones included: logging, metrics, tests. */
  onResponse?: (info: ResponseInfo) => void;
}

export function newRetryKey(): string {
  return crypto.randomUUID();
}

/** What Retry-After (or, on a 429 without it, the RateLimit field's reset) says, else exponential backoff. */
function waitMs(response: Response, attempt: number, maxWaitMs: number): number {
  const seconds = holdBackSeconds(response) || 2 ** (attempt - 1);
  return Math.min(seconds * 1000, maxWaitMs);
}

/** Waits `ms`, or less when the request is aborted (its next attempt then fails at once). */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

export function agoraFetch(options: TransportOptions): (input: Request) => Promise<Response> {
  const send = options.fetch ?? globalThis.fetch;
  const maxAttempts = options.maxAttempts ?? 5;
  const maxWaitMs = options.maxWaitMs ?? 30_000;
  const retried = new Set(options.retryOn ?? [429, 503]);
  return async (input: Request) => {
    const headers = new Headers(input.headers);
    if (options.token && !headers.has('authorization')) headers.set('authorization', `Bearer ${options.token}`);
    if (input.method === 'POST' && !headers.has('idempotency-key')) headers.set('idempotency-key', newRetryKey());
    const request = new Request(input, { headers });
    for (let attempt = 1; ; attempt++) {
      const response = await send(request.clone());
      options.onResponse?.({
        method: request.method,
        url: request.url,
        status: response.status,
        attempt,
        rateLimit: parseRateLimit(response.headers),
      });
      if (!retried.has(response.status) || attempt >= maxAttempts) return response;
      await response.body?.cancel();
      await wait(waitMs(response, attempt, maxWaitMs), request.signal);
    }
  };
}
