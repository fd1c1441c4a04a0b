import { randomUUID } from 'node:crypto';
import type { Server } from '@hapi/hapi';
import type { Runtime } from '../context.ts';
import type { ApiContext } from '../http/context.ts';
import { drainAndStop } from '../http/drain.ts';
import { envelope } from '../http/envelope.ts';
import { registerEndpoints } from '../http/router.ts';
import { createHttpServer } from '../http/server.ts';
import { ReadReplicas } from '../db/replicas.ts';
import { RenderedReads } from '../http/renderedReads.ts';
import { Dispatcher } from '../pipeline/dispatcher.ts';
import { ReplyListener } from '../pipeline/replies.ts';
import { findResult } from '../pipeline/results.ts';
import { closeRedis, connectRedis, queueConnection, queuePrefix, redisReady } from '../redis.ts';
import { discoveryDocument } from '../routes/forum/discovery.ts';
import { forumEndpoints, forumOpenApi } from '../routes/forum/index.ts';
import { startEventStreams } from '../routes/forum/events/stream.ts';
import { registerRelay } from '../routes/relay/index.ts';
import { AdmissionStore } from '../store/admission.ts';
import { RateLimiter } from '../store/rateLimiter.ts';
import { storesOn } from '../store/stores.ts';

export interface ApiRole {
  server: Server;
  /** Drains (see drainAndStop; event streams end as the listener stops), then closes the streams' subscription, the reply channel, the queues and the API's Redis connection. */
  stop(): Promise<void>;
}

/** The forum's and the relay's endpoints on the HTTP pipeline: the one place routes meet the server. */
function registerApi(server: Server, ctx: ApiContext): void {
  registerEndpoints(server, ctx, forumEndpoints(ctx.settings));
  // Built on first request: generating it takes a few hundred milliseconds that no start should wait for.
  let openapi: Record<string, unknown> | null = null;
  server.route({ method: 'GET', path: '/api/forum', handler: (request) => envelope(request.path, true, discoveryDocument(ctx.settings)) });
  server.route({ method: 'GET', path: '/api/forum/openapi.json', handler: () => (openapi ??= forumOpenApi(ctx.settings)) });
  registerRelay(server, ctx);
}

/**
 * The API role: its own fail-fast Redis connection (a request answers 503
 * during an outage rather than hang), a reply channel of its own, the
 * dispatcher onto the partition queues, and the HTTP server, listening.
 */
export async function startApiRole(runtime: Runtime): Promise<ApiRole> {
  const { settings, orm } = runtime;
  const redis = connectRedis(settings, 'agora-api', 'fail-fast');
  runtime.health.watchRedis(redis, 'api');
  await redisReady(redis);
  const stores = storesOn(redis, settings.redisPrefix);
  const subscriber = connectRedis(settings, 'agora-replies');
  runtime.health.watchRedis(subscriber, 'replies');
  const replies = new ReplyListener(subscriber, stores.keys.replyChannel(randomUUID()));
  await replies.start();
  const queues = queueConnection(settings, redis, 'agora-queues', 'fail-fast');
  if (queues !== redis) {
    runtime.health.watchRedis(queues, 'queues');
    await redisReady(queues);
  }
  const dispatcher = new Dispatcher({
    connection: queues,
    prefix: queuePrefix(settings),
    partitions: settings.partitions,
    timeoutMs: settings.commandTimeoutMs,
    replies,
    findResult: (commandId) => findResult(orm.em.fork(), commandId),
  });
  runtime.metrics.watchQueues(() => dispatcher.queueCounts());
  const admission = new AdmissionStore(redis, new RateLimiter(redis), stores.idempotency);
  const replicas = await ReadReplicas.open(orm, settings.databaseReplicaUrls, { maxLagMs: settings.replicaMaxLagMs, health: runtime.health });
  const renderedReads = new RenderedReads(settings.readCacheBytes, runtime.metrics);
  const ctx: ApiContext = { ...runtime, ...stores, redis, admission, dispatcher, replicas, renderedReads };
  const server = await createHttpServer(ctx);
  registerApi(server, ctx);
  const streams = await startEventStreams(server, ctx);
  await server.start();
  return {
    server,
    stop: async () => {
      // The event streams end when the listener stops (after the grace): their clients reconnect elsewhere.
      await drainAndStop(server, settings.drainGraceMs, settings.commandTimeoutMs + 1000);
      await streams.stop();
      await replies.stop();
      await dispatcher.close();
      await replicas.close();
      if (queues !== redis) await closeRedis(queues);
      await closeRedis(redis);
    },
  };
}
