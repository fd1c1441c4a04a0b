import Hapi from '@hapi/hapi';
import type { ApiContext } from '../context.ts';
import { pendingMigrations } from '../db/orm.ts';
import { discoveryDocument } from '../routes/forum/discovery.ts';
import { forumEndpoints } from '../routes/forum/index.ts';
import { registerRelay } from '../routes/relay/index.ts';
import { envelope } from './envelope.ts';
import { errorMapper } from './errorMapping.ts';
import { buildOpenApi } from './openapi.ts';
import { registerEndpoints } from './router.ts';

export async function createApiServer(ctx: ApiContext, log: (error: Error) => void): Promise<Hapi.Server> {
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
  server.ext('onPreResponse', errorMapper(log));

  const endpoints = forumEndpoints(ctx.settings);
  registerEndpoints(server, ctx, endpoints);
  const openapi = buildOpenApi(endpoints, {
    '/api/forum': { get: { operationId: 'discovery', summary: 'Discovery document', responses: { '200': { description: 'OK' } } } },
    '/api/forum/openapi.json': { get: { operationId: 'openapi', summary: 'This document', responses: { '200': { description: 'OK' } } } },
  });

  server.route({ method: 'GET', path: '/api/forum', handler: (request) => envelope(request.path, true, discoveryDocument(ctx.settings)) });
  server.route({ method: 'GET', path: '/api/forum/openapi.json', handler: () => openapi });
  registerRelay(server, ctx);

  let migrated = false;
  server.route({ method: 'GET', path: '/healthz', handler: () => ({ ok: true }) });
  // Operators: the partition queues at a glance (any BullMQ dashboard also works with prefix REDIS_PREFIX).
  server.route({ method: 'GET', path: '/queuez', handler: async () => ({ ok: true, prefix: ctx.settings.redisPrefix, queues: await ctx.dispatcher.queueCounts() }) });
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
      return h.response({ ok: ready, checks }).code(ready ? 200 : 503);
    },
  });
  return server;
}
