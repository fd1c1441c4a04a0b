import { createServer } from 'node:http';
import Hapi from '@hapi/hapi';
import type { ApiContext } from '../context.ts';
import { pendingMigrations } from '../db/orm.ts';
import { discoveryDocument } from '../routes/forum/discovery.ts';
import { forumEndpoints, forumOpenApi } from '../routes/forum/index.ts';
import { registerRelay } from '../routes/relay/index.ts';
import type { Dependency } from '../observability/outages.ts';
import { registerDrain } from './drain.ts';
import { envelope } from './envelope.ts';
import { errorMapper } from './errorMapping.ts';
import { registerOperatorRoutes } from './operator.ts';
import { answerParserRefusalsWithErrorBody } from './parserRefusals.ts';
import { registerRequestLog } from './requestLog.ts';
import { registerEndpoints } from './router.ts';

function dependencyProbe(ctx: ApiContext, dependency: Dependency): () => Promise<unknown> {
  return dependency === 'postgres' ? () => ctx.orm.em.fork().execute('select 1') : () => ctx.redis.ping();
}

export async function createApiServer(ctx: ApiContext): Promise<Hapi.Server> {
  const server = Hapi.server({
    // Node answers an HTTP/1.1 request without exactly one Host header with a bare 400 that never reaches
    // hapi; hapi routes without it, so such a request gets a real answer (or the contract's error body).
    listener: createServer({ requireHostHeader: false }),
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
  registerDrain(server);
  answerParserRefusalsWithErrorBody(server.listener);
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
      if (server.app.draining) return h.response({ ok: false, draining: true }).code(503).header('Retry-After', '2');
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
