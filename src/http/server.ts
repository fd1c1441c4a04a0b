import type { Duplex } from 'node:stream';
import Hapi from '@hapi/hapi';
import type { ApiContext } from '../context.ts';
import { pendingMigrations } from '../db/orm.ts';
import { discoveryDocument } from '../routes/forum/discovery.ts';
import { forumEndpoints, forumOpenApi } from '../routes/forum/index.ts';
import { registerRelay } from '../routes/relay/index.ts';
import type { Dependency } from '../observability/outages.ts';
import { envelope } from './envelope.ts';
import { errorMapper } from './errorMapping.ts';
import { registerOperatorRoutes } from './operator.ts';
import { registerRequestLog } from './requestLog.ts';
import { registerEndpoints } from './router.ts';

/**
 * A request line or headers beyond Node's limit never reach hapi, which
 * answers with a bare 400. Give that case the contract's error body too;
 * every other client error stays with hapi's own handler.
 */
function answerOversizedRequestsWithErrorBody(server: Hapi.Server): void {
  const listener = server.listener;
  const [hapiHandler] = listener.listeners('clientError') as ((error: Error & { code?: string }, socket: Duplex) => void)[];
  listener.removeAllListeners('clientError');
  listener.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    if (error.code !== 'HPE_HEADER_OVERFLOW' || !socket.writable) return hapiHandler?.(error, socket);
    const body = JSON.stringify(envelope('/api/forum', false, { error: { code: 'invalid_request', message: 'the request line or headers are too large' } }));
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}

function dependencyProbe(ctx: ApiContext, dependency: Dependency): () => Promise<unknown> {
  return dependency === 'postgres' ? () => ctx.orm.em.fork().execute('select 1') : () => ctx.redis.ping();
}

export async function createApiServer(ctx: ApiContext): Promise<Hapi.Server> {
  const server = Hapi.server({
    port: ctx.settings.port,
    host: ctx.settings.host,
    router: { stripTrailingSlash: true },
    routes: {
      // Joi is applied by the router per action; hapi only guards transport.
      payload: { maxBytes: ctx.settings.maxBodyBytes },
      response: { emptyStatusCode: 204 },
    },
  });
  server.ext('onPreResponse', errorMapper((dependency, error) => ctx.health.reportFailure(dependency, error, dependencyProbe(ctx, dependency))));
  // After the error mapper, so the request id lands on the response that leaves.
  await registerRequestLog(server, ctx.logger, ctx.metrics);
  answerOversizedRequestsWithErrorBody(server);
  await registerOperatorRoutes(server, ctx);

  const endpoints = forumEndpoints(ctx.settings);
  registerEndpoints(server, ctx, endpoints);
  // Built on first request: generating it takes a few hundred milliseconds that no start should wait for.
  let openapi: Record<string, unknown> | null = null;

  server.route({ method: 'GET', path: '/api/forum', handler: (request) => envelope(request.path, true, discoveryDocument(ctx.settings)) });
  server.route({ method: 'GET', path: '/api/forum/openapi.json', handler: () => (openapi ??= forumOpenApi(ctx.settings)) });
  registerRelay(server, ctx);

  let migrated = false;
  server.route({ method: 'GET', path: '/healthz', handler: () => ({ ok: true }) });
  server.route({
    method: 'GET',
    path: '/readyz',
    handler: async (_request, h) => {
      const checks: Record<string, boolean> = { postgres: false, redis: false, migrations: migrated };
      try {
        await ctx.orm.em.fork().execute('select 1');
        checks.postgres = true;
        if (!migrated) checks.migrations = migrated = (await pendingMigrations(ctx.orm)) === 0;
      } catch {
        checks.postgres = false;
      }
      try {
        checks.redis = (await ctx.redis.ping()) === 'PONG';
      } catch {
        checks.redis = false;
      }
      const ready = Object.values(checks).every(Boolean);
      const response = h.response({ ok: ready, checks }).code(ready ? 200 : 503);
      return ready ? response : response.header('Retry-After', '2');
    },
  });
  return server;
}
