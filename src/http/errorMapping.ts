import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';
import { ApiError, type ErrorCode } from '../errors.ts';
import { outageOf, type Dependency } from '../logging/outages.ts';
import { envelope } from './envelope.ts';

interface BoomLike extends Error {
  isBoom: true;
  output: { statusCode: number; headers: Record<string, string | string[] | number | undefined> };
}

const codeForStatus: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

function toApiError(error: BoomLike): ApiError {
  if (error instanceof ApiError) return error;
  const status = error.output.statusCode;
  if (status >= 500) return new ApiError('internal_error', 'internal error');
  const code = codeForStatus[status] ?? 'invalid_request';
  const message = status === 404 ? 'no such endpoint' : error.message;
  return new ApiError(code, message);
}

/**
 * A dependency outage is the client's cue to come back, never a 500. Sooner for Redis: a request hears of its
 * outage only after the client's own retries, about as long as a cluster failover takes (about 3 s in the chaos
 * suite), so the store is mostly back by then; a Postgres failover takes 10 s or more, and 2 s halves the retries
 * meanwhile.
 */
function unavailable(dependency: Dependency): ApiError {
  return new ApiError(
    'service_unavailable',
    `${dependency === 'postgres' ? 'the database' : 'the queue store'} is unreachable; retry shortly`,
    undefined,
    { 'Retry-After': dependency === 'postgres' ? '2' : '1' },
  );
}

/**
 * The one place errors become HTTP: every thrown ApiError, and every error
 * hapi raises itself (unknown route, bad JSON, too large, wrong media type),
 * leaves as the contract's error body. Lost connections to Postgres or
 * Redis answer 503 with Retry-After (and are logged once per outage).
 */
export function errorMapper(onOutage: (dependency: Dependency, error: Error) => void): Lifecycle.Method {
  return (request: Request, h: ResponseToolkit) => {
    const response = request.response as unknown as BoomLike | { isBoom?: false };
    if (!response.isBoom) return h.continue;
    const boom = response as BoomLike;
    const dependency = boom instanceof ApiError ? null : outageOf(boom);
    if (dependency) onOutage(dependency, boom);
    const apiError = dependency ? unavailable(dependency) : toApiError(boom);
    if (apiError.status >= 500 && !(boom instanceof ApiError) && !dependency) request.logger.error({ err: boom }, 'request failed');
    const out = h.response(envelope(request.path, false, { error: apiError.toBody() })).code(apiError.status);
    for (const [name, value] of Object.entries(apiError.headers)) out.header(name, value);
    if (apiError.status === 405) out.header('Allow', 'GET');
    return out;
  };
}
