import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HapiAdapter } from '@bull-board/hapi';
import type { ApiContext } from './context.ts';
import { ApiError } from '../errors.ts';
import { isOperator, OPERATOR_CHALLENGE, operatorRefusal } from '../operator/operatorAccess.ts';
import { backlogByProject, readJobSummaries, type ReadLimits } from '../operator/projectBacklog.ts';
import { redactSecrets } from '../logging/redact.ts';
import { headerValue } from './auth.ts';
import { PROJECTS_PATH, registerProjectPages } from './operatorPages.ts';

const DASHBOARD_PATH = '/admin/queues';
const OPERATOR_PATHS = [DASHBOARD_PATH, PROJECTS_PATH, '/metrics', '/queuez'];
/** What a scrape reads per partition queue for the per-project gauges: the pending jobs (up to a bound) and the failed ones. */
const SCRAPE_LIMITS: ReadLimits = { pending: 1000, failed: 1000, completed: 0 };

function isOperatorPath(path: string): boolean {
  return OPERATOR_PATHS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/**
 * Operators' surfaces: the bull-board dashboard, the per-project pages,
 * Prometheus metrics and the queue counts, all behind OPERATOR_TOKEN (HTTP
 * Basic with any user name, or Bearer). Without the setting nobody gets in.
 * Checked before routing, so an unauthorised request learns nothing about
 * which paths exist below.
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
  registerProjectPages(server, ctx);

  // The per-project series: backlog read from the queues at scrape time, latency heard by the dispatcher.
  const queues = ctx.dispatcher.partitionQueues;
  ctx.metrics.projects.watch(
    async () => backlogByProject((await Promise.all(queues.map((queue) => readJobSummaries(queue, SCRAPE_LIMITS)))).flat()),
    ctx.settings.metricsTopProjects,
  );
  ctx.dispatcher.observeAnswers((partitionKey, seconds) => ctx.metrics.projects.observeAnswer(partitionKey, seconds));
  ctx.metrics.streamsLimit.set(ctx.settings.streamMaxPerProcess);

  server.route({
    method: 'GET',
    path: '/metrics',
    handler: async (_request, h) => {
      const { contentType, body } = await ctx.metrics.scrape();
      return h.response(body).type(contentType);
    },
  });
  server.route({
    method: 'GET',
    path: '/queuez',
    handler: async () => ({ ok: true, prefix: ctx.settings.redisPrefix, queues: await ctx.dispatcher.queueCounts() }),
  });
}
