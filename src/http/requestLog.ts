import { randomUUID } from 'node:crypto';
import type { Request, ResponseObject, ResponseToolkit, Server } from '@hapi/hapi';
import hapiPino from 'hapi-pino';
import type { Logger } from '../logging/logger.ts';
import { loggableUrl } from '../logging/loggableUrl.ts';
import type { Metrics } from '../operator/metrics.ts';
import { headerValue } from './auth.ts';

declare module '@hapi/hapi' {
  interface RequestApplicationState {
    requestId?: string;
    agentId?: string;
  }
}

const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The client's X-Request-Id when it is a sane token, otherwise a fresh one; echoed in the response. */
export function requestIdOf(request: Request): string {
  if (request.app.requestId) return request.app.requestId;
  const offered = headerValue(request, 'x-request-id');
  request.app.requestId = offered !== undefined && CLIENT_REQUEST_ID.test(offered) ? offered : randomUUID();
  return request.app.requestId;
}

function statusOf(request: Request): number {
  const response = request.response as ResponseObject | { output?: { statusCode: number } } | symbol | null;
  if (!response) return 0;
  // A handler that wrote the response itself (h.abandon: the event stream) set the status on the raw response.
  if (typeof response === 'symbol') return request.raw.res.headersSent ? request.raw.res.statusCode : 0;
  return 'statusCode' in response ? response.statusCode : (response.output?.statusCode ?? 0);
}

/**
 * One JSON line per request (on hapi-pino's per-request logger): request id,
 * method, route, status, duration and the agent when one authenticated. The
 * URL is logged as loggableUrl reduces it (no credential, private value or
 * account id) and no header is logged at all. The same hook feeds the HTTP metrics.
 */
export async function registerRequestLog(server: Server, logger: Logger, metrics: Metrics): Promise<void> {
  await server.register({
    plugin: hapiPino,
    options: {
      instance: logger,
      // The request line is written below, once the agent and the status are known.
      logEvents: ['request-error', 'log'],
      // A client that hangs up (ECONNRESET) is the client's business, not a server error line.
      // (hapi-pino reads an object here; its typings say object[].)
      ignoredEventTags: { log: ['client'], request: ['client'] } as unknown as object[],
      logRequestComplete: false,
      getChildBindings: (request: Request) => ({ requestId: requestIdOf(request) }),
    },
  });

  server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => {
    const response = request.response as ResponseObject | { output: { headers: Record<string, string> } };
    const id = requestIdOf(request);
    if ('output' in response) response.output.headers['X-Request-Id'] = id;
    else response.header('X-Request-Id', id);
    return h.continue;
  });

  server.events.on('response', (request: Request) => {
    // Never request.url here: hapi parses it on first read, and that throws for a Host header it cannot
    // parse (and is null for a target it could not parse). The raw target is always a string.
    const method = String(request.method ?? '').toUpperCase();
    const route = request.route?.path ?? null;
    const status = statusOf(request);
    const durationMs = (request.info.responded || Date.now()) - request.info.received;
    const labels = { route: route ?? 'unmatched', method, status: String(status) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, durationMs / 1000);
    // hapi-pino binds request.logger on onRequest, which a request refused before routing may never reach.
    const requestLogger = request.logger ?? logger;
    // Below the configured level (a load test at LOG_LEVEL=error) the line is not even built.
    if (!requestLogger.isLevelEnabled('info')) return;
    // hapi answers what no route matched from its internal '_special' routes: nothing there was served.
    const served = request.route && request.route.method !== ('_special' as string) ? route : null;
    const line = {
      method,
      route,
      url: loggableUrl(request.raw.req.url ?? '', served),
      status,
      durationMs,
      agentId: request.app.agentId ?? null,
    };
    requestLogger.info(line, `${method} ${route} ${status} ${durationMs}ms`);
  });
}
