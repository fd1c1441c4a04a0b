import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HapiAdapter } from '@bull-board/hapi';
import type { ApiContext } from './context.ts';
import { ApiError } from '../errors.ts';
import { isOperator, OPERATOR_CHALLENGE, operatorRefusal } from '../observability/operatorAccess.ts';
import { redactSecrets } from '../observability/redact.ts';
import { headerValue } from './auth.ts';

export const DASHBOARD_PATH = '/admin/queues';
const OPERATOR_PATHS = [DASHBOARD_PATH, '/metrics', '/queuez'];

function isOperatorPath(path: string): boolean {
  return OPERATOR_PATHS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/**
 * Operators' surfaces: the bull-board dashboard, Prometheus metrics and the
 * queue counts, all behind OPERATOR_TOKEN (HTTP Basic with any user name, or
 * Bearer). Without the setting nobody gets in. Checked before routing, so an
 * unauthorised request learns nothing about which paths exist below.
 */
export async function registerOperatorRoutes(server: Server, ctx: ApiContext): Promise<void> {
  server.ext('onRequest', (request: Request, h: ResponseToolkit) => {
    if (!isOperatorPath(request.path) || isOperator(headerValue(request, 'authorization'), ctx.settings.operatorToken)) return h.continue;
    throw new ApiError('unauthenticated', operatorRefusal(ctx.settings.operatorToken), undefined, OPERATOR_CHALLENGE);
  });

  const board = new HapiAdapter();
  board.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: ctx.dispatcher.partitionQueues.map((queue) => {
      const adapter = new BullMQAdapter(queue, { description: 'commands of the projects and agents that hash to this partition' });
      adapter.setFormatter('data', redactSecrets);
      adapter.setFormatter('returnValue', redactSecrets);
      return adapter;
    }),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'Agora queues' } },
  });
  await server.register(board.registerPlugin(), { routes: { prefix: DASHBOARD_PATH } });

  server.route({
    method: 'GET',
    path: '/metrics',
    handler: async (_request, h) => {
      const { contentType, body } = await ctx.metrics.scrape();
      return h.response(body).type(contentType);
    },
  });
  server.route({ method: 'GET', path: '/queuez', handler: async () => ({ ok: true, prefix: ctx.settings.redisPrefix, queues: await ctx.dispatcher.queueCounts() }) });
}
