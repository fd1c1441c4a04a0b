import { randomUUID } from 'node:crypto';
import type { Server } from '@hapi/hapi';
import type { Runtime } from '../context.ts';
import type { ApiContext, EventStreams } from '../http/context.ts';
import { drainAndStop } from '../http/drain.ts';
import { envelope } from '../http/envelope.ts';
import { registerEndpoints } from '../http/router.ts';
import { createHttpServer } from '../http/server.ts';
import { ReadReplicas } from '../db/replicas.ts';
import { baseStreamQuota, streamQuota } from '../http/quotas.ts';
import { RenderedReads } from '../http/renderedReads.ts';
import { RevocationWatch } from '../http/revocationWatch.ts';
import { SseRegistry } from '../http/sse.ts';
import { LedgerFanout } from '../ledger/fanout.ts';
import { Dispatcher } from '../pipeline/dispatcher.ts';
import { ReplyListener } from '../pipeline/replies.ts';
import { findResult } from '../pipeline/results.ts';
import type { CommandResult } from '../pipeline/command.ts';
import { afterCommitPipeline } from '../store/afterCommit.ts';
import { commitPosition, queueRefreshes } from '../store/commitRefreshes.ts';
import { closeRedis, connectRedis, queueConnection, queuePrefix, redisReady, type RedisClient } from '../redis.ts';
import { discoveryDocument } from '../routes/forum/discovery.ts';
import { forumDocumentPaths, forumEndpoints, forumOpenApi } from '../routes/forum/index.ts';
import { registerRelay } from '../routes/relay/index.ts';
import { AdmissionStore } from '../store/admission.ts';
import { Announcements } from '../store/announcements.ts';
import { RateLimiter } from '../store/rateLimiter.ts';
import { storesOn, type Stores } from '../store/stores.ts';
import { StreamSlots } from '../store/streamSlots.ts';

export interface ApiRole {
  server: Server;
  /**
   * Drains (see drainAndStop; event streams end as the listener stops), then closes the streams'
   * subscription, the reply channel, the queues and the API's Redis connection.
   */
  stop(): Promise<void>;
}

/** The forum's and the relay's endpoints on the HTTP pipeline: the one place routes meet the server. */
function registerApi(server: Server, ctx: ApiContext): void {
  registerEndpoints(server, ctx, forumEndpoints(ctx.settings));
  // Built on first request: generating it takes a few hundred milliseconds that no start should wait for.
  let openapi: Record<string, unknown> | null = null;
  server.route({
    method: 'GET',
    path: forumDocumentPaths.discovery,
    handler: (request) => envelope(request.path, true, discoveryDocument(ctx.settings)),
  });
  server.route({ method: 'GET', path: forumDocumentPaths.openapi, handler: () => (openapi ??= forumOpenApi(ctx.settings)) });
  registerRelay(server, ctx);
}

/**
 * A command's result read from Postgres, not heard as a reply (late, lost, or a retry of a finished command): its
 * batch may have died between its commit and its after-commit pipeline, so before it is answered this does what that
 * pipeline would have done for it: the outbox is marked (its writer's event reads take the Postgres path:
 * src/store/ledgerMarks.ts), what its commit refreshes is refreshed (src/store/commitRefreshes.ts), and with
 * replicas its actor's commit position is recorded, so that the actor reads its own write at once.
 */
async function findAndRefresh(
  orm: Runtime['orm'],
  settings: Runtime['settings'],
  redis: RedisClient,
  stores: Stores,
  commandId: string,
  actorAgentId: string | null,
): Promise<CommandResult | null> {
  const em = orm.em.fork();
  const recorded = await findResult(em, commandId);
  if (!recorded) return null;
  const position = await commitPosition(settings, em);
  const pipeline = afterCommitPipeline(redis);
  stores.ledgerMarks.markDirty(pipeline);
  queueRefreshes(pipeline, stores, recorded.refreshes, position);
  if (position !== null && actorAgentId !== null) stores.positions.record(pipeline, [actorAgentId], position);
  await pipeline.exec();
  return recorded.result;
}

/**
 * The process's event streams: one Redis subscription (the ledger head's
 * announcements, and credentials that changed) feeds one ledger fan-out,
 * which every stream of this process joins; slots per agent count in Redis
 * across instances; revoked tokens' streams end. `stop` ends every stream
 * (clients reconnect elsewhere) and the subscription.
 */
async function startEventStreams(
  runtime: Runtime,
  redis: Runtime['redis'],
  stores: Stores,
): Promise<EventStreams & { stop(): Promise<void> }> {
  const { settings, logger } = runtime;
  const fanout = new LedgerFanout(runtime.orm.em, {
    catchUpMs: settings.streamCatchUpMs,
    onError: (error) => logger.warn({ err: error }, 'event fan-out could not read the ledger'),
  });
  await fanout.start();
  const subscriber = connectRedis(settings, 'agora-ledger-announcements', 'subscriber');
  runtime.health.watchRedis(subscriber, 'ledger-announcements');
  const announcements = new Announcements(subscriber);
  await announcements.listen(stores.keys.ledgerAnnouncements, (head) => fanout.announce(head));
  const registry = new SseRegistry(
    { perProcess: settings.streamMaxPerProcess, retryAfterSeconds: baseStreamQuota.retryAfterSeconds },
    settings.streamHeartbeatMs,
  );
  const slots = new StreamSlots(redis, stores.keys, streamQuota(settings), (error) =>
    logger.debug({ err: error }, 'event stream slots could not reach Redis; counted on this instance alone meanwhile'),
  );
  const revocations = new RevocationWatch(runtime, registry);
  await announcements.listen(stores.keys.credentialsChanged, (hashes) => revocations.announced(hashes.split(',')));
  // Back from a reconnection: what was announced meanwhile is lost, so every open stream's token is checked at once.
  subscriber.on('ready', () => revocations.recheck());
  return {
    fanout,
    registry,
    slots,
    stop: async () => {
      revocations.stop();
      registry.closeAll();
      slots.stop();
      fanout.stop();
      await announcements.stop();
    },
  };
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
  const subscriber = connectRedis(settings, 'agora-replies', 'subscriber');
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
    lingerMs: settings.batchLingerMs,
    replies,
    findResult: (commandId, actorAgentId) => findAndRefresh(orm, settings, redis, stores, commandId, actorAgentId),
  });
  runtime.metrics.watchQueues(() => dispatcher.queueCounts());
  const admission = new AdmissionStore(redis, new RateLimiter(redis), stores.idempotency);
  const replicas = await ReadReplicas.open(orm, settings.databaseReplicaUrls, {
    maxLagMs: settings.replicaMaxLagMs,
    health: runtime.health,
  });
  const renderedReads = new RenderedReads(settings.readCacheBytes, runtime.metrics);
  const streams = await startEventStreams(runtime, redis, stores);
  const ctx: ApiContext = { ...runtime, ...stores, redis, admission, dispatcher, replicas, renderedReads, streams };
  const server = await createHttpServer(ctx);
  registerApi(server, ctx);
  // Before the listener stops: a stream never ends by itself, and its socket would keep the listener open until hapi's stop timeout.
  server.ext('onPreStop', () => streams.registry.closeAll());
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
