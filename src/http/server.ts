import { createServer } from 'node:http';
import Hapi from '@hapi/hapi';
import { pingPostgres } from '../db/probes.ts';
import type { ApiContext } from './context.ts';
import type { Dependency } from '../logging/outages.ts';
import { registerDrain } from './drain.ts';
import { errorMapper } from './errorMapping.ts';
import { registerHealthRoutes } from './health.ts';
import { registerOperatorRoutes } from './operator.ts';
import { answerParserRefusalsWithErrorBody } from './parserRefusals.ts';
import { registerRequestLog } from './requestLog.ts';

function dependencyProbe(ctx: ApiContext, dependency: Dependency): () => Promise<unknown> {
  return dependency === 'postgres' ? () => pingPostgres(ctx.orm) : () => ctx.redis.ping();
}

/**
 * The HTTP pipeline every request goes through, without the API's routes
 * (src/roles/api.ts adds them): transport limits, the error mapper, request
 * logs and metrics, drain, parser refusals, the operator surfaces and the
 * health endpoints.
 */
export async function createHttpServer(ctx: ApiContext): Promise<Hapi.Server> {
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
  server.ext(
    'onPreResponse',
    errorMapper((dependency, error) => ctx.health.reportFailure(dependency, error, dependencyProbe(ctx, dependency))),
  );
  // After the error mapper, so the request id lands on the response that leaves.
  await registerRequestLog(server, ctx.logger, ctx.metrics);
  registerDrain(server);
  answerParserRefusalsWithErrorBody(server.listener);
  await registerOperatorRoutes(server, ctx);

  registerHealthRoutes(server, ctx);
  return server;
}
