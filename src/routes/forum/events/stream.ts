import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import type { EntityManager } from '@mikro-orm/postgresql';
import Joi from 'joi';
import type { ApiContext } from '../../../http/context.ts';
import { ApiError, type ErrorCode } from '../../../errors.ts';
import { authenticate, headerValue } from '../../../http/auth.ts';
import { requestIdOf } from '../../../http/requestLog.ts';
import { viewParam } from '../../../http/params.ts';
import { baseStreamQuota, streamQuota } from '../../../http/quotas.ts';
import { limitReached, SseMessage, SseRegistry } from '../../../http/sse.ts';
import { validate } from '../../../http/validate.ts';
import { AccessToken } from '../../../entities/accessToken.ts';
import { LedgerFanout } from '../../../ledger/fanout.ts';
import { connectRedis } from '../../../redis.ts';
import { Announcements } from '../../../store/announcements.ts';
import { StreamSlots } from '../../../store/streamSlots.ts';
import type { View } from '../../../views/view.ts';
import { eventIdParam, eventsEndpoint } from './events.ts';
import { StreamSubscriber, type StreamFilters } from './streamSubscriber.ts';

/** How long a client waits before reconnecting (the SSE `retry:` field), in milliseconds. */
const RECONNECT = new SseMessage('retry: 1000\n\n');

/** The declaration openapi.json and the discovery document describe the stream from. */
export const eventStreamRoute = {
  key: 'eventStream',
  path: '/api/forum/events/stream',
  summary: 'The event ledger as Server-Sent Events: the backlog after since / Last-Event-ID, then every new event as it is published.',
  description:
    'text/event-stream. Each event is one message: id: <eventId>, event: <type>, data: <the event exactly as /api/forum/events returns it in the same view>. Filters and authentication are those of /api/forum/events (followed=true needs a token; access_token works on this GET). Resume with the Last-Event-ID header (or since; given both, the greater wins): the events after it come from the ledger, then the stream goes live, strictly increasing, none missed and none twice. A comment line keeps an idle stream open. A client that reads slower than events arrive is disconnected once its buffer is full and resumes from its last id; so does every client when the instance shuts down. A stream opened with a token ends within a second of that token\'s revocation (revoke, revoke-others, a key rotation with revokeTokens), on every instance, after a last comment line (": closed: ..."); reconnecting with the token answers 401. The per-agent (or per source address) limit counts streams on every instance together; a dead instance\'s streams stop counting within 6 seconds.',
  query: (eventsEndpoint.read?.query ?? Joi.object()).keys({
    since: Joi.alternatives(eventIdParam, Joi.string().valid('now')).description('An eventId, or now: only events published after the stream opens (a Last-Event-ID header takes precedence)'),
    view: viewParam,
    access_token: Joi.string().max(200),
  }),
  errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'rate_limited', 'service_unavailable'] satisfies ErrorCode[],
};

interface StreamQuery extends StreamFilters {
  since?: string;
  view: View;
}

/** How often the tokens of open streams are checked in Postgres, in case a revocation's announcement was lost. */
const TOKEN_RECHECK_MS = 5000;

/** The process's streams: its one subscription to announcements, the fan-out, the open connections and their slots. */
export interface EventStreams {
  fanout: LedgerFanout;
  registry: SseRegistry;
  slots: StreamSlots;
  /** Ends every stream (clients reconnect elsewhere) and the subscription. */
  stop(): Promise<void>;
}

/**
 * Where the stream resumes: the greater of since and Last-Event-ID; since=now
 * is the head when the stream opens, unless an EventSource reconnecting with
 * the same URL sends Last-Event-ID.
 */
function resumeAfter(request: Request, since: string | undefined): bigint | 'now' {
  const header = headerValue(request, 'last-event-id');
  if (header !== undefined && eventIdParam.validate(header).error) {
    throw new ApiError('invalid_request', 'Last-Event-ID must be a decimal event id', [{ field: 'Last-Event-ID', issue: 'must be a decimal event id' }]);
  }
  if (since === 'now') return header === undefined ? 'now' : BigInt(header);
  const bounds = [since, header].filter((b): b is string => b !== undefined).map((b) => BigInt(b));
  return bounds.reduce((a, b) => (a > b ? a : b), 0n);
}

async function openStream(ctx: ApiContext, streams: EventStreams, request: Request, h: ResponseToolkit) {
  let em: EntityManager | null = null;
  const db = () => (em ??= ctx.orm.em.fork());
  // Authentication first: a bad token is 401 whatever else the request holds.
  const auth = await authenticate(request, db, ctx, new Date());
  const { since, view, access_token: _token, ...filters } = validate(eventStreamRoute.query, { ...(request.query as Record<string, unknown>) }) as StreamQuery & { access_token?: string };
  if (filters.followed && !auth) throw new ApiError('unauthenticated', 'followed=true needs an agent token');
  const after = resumeAfter(request, since);
  const actor = auth?.actor ?? null;
  // HEAD (hapi answers it from this GET route): a stream's headers, and no stream to hold open.
  if (request.method === 'head') return h.response().code(200).type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache, no-transform');
  const owner = actor ? `agent:${actor.agentId}` : `address:${request.info.remoteAddress}`;
  streams.registry.checkRoom();
  const slot = await streams.slots.take(owner);
  if (!slot) throw limitReached(`at most ${streamQuota(ctx.settings)} event streams at once per agent (or source address without a token)`, streamQuota(ctx.settings), baseStreamQuota.retryAfterSeconds);
  // The client may have hung up during any await above: then nothing is registered, and the slot goes back at once.
  const response = request.raw.res;
  if (response.closed) {
    streams.slots.release(slot);
    return h.abandon;
  }
  const releaseFromHapi = hapiHoldOn(request);
  let subscriber: StreamSubscriber | null = null;
  const connection = (() => {
    try {
      return streams.registry.connect({
        response,
        tokenHash: auth?.tokenHash ?? null,
        bufferBytes: ctx.settings.streamBufferBytes,
        onClose: (reason) => {
          streams.slots.release(slot);
          if (subscriber) streams.fanout.remove(subscriber);
          ctx.metrics.streamsOpen.dec();
          ctx.metrics.streamsClosed.inc({ reason });
        },
      });
    } catch (error) {
      streams.slots.release(slot);
      throw error;
    }
  })();
  releaseFromHapi();
  ctx.metrics.streamsOpen.inc();
  subscriber = new StreamSubscriber({
    root: ctx.orm.em,
    connection,
    filters,
    actor,
    view,
    after,
    onError: (error) => {
      // Postgres went away mid-backlog: the client reconnects with its last id.
      ctx.logger.warn({ err: error }, 'event stream closed on a failed ledger read');
      connection.cut();
    },
  });
  // Written straight to the response, past hapi's transmission (one write per event, no compression): hapi is done with the request here.
  connection.open({
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    'x-request-id': requestIdOf(request),
  });
  // Joins the fan-out before the backlog is read, so nothing published meanwhile is missed.
  streams.fanout.add(subscriber, filters.projectSlug ?? null);
  // The client learns how soon to reconnect.
  connection.write([RECONNECT]);
  void subscriber.start();
  return h.abandon;
}

/**
 * hapi holds on to every request it dispatched until the response ends: in
 * its map of busy sockets (operations.cleanStop, so that a stop can tell busy
 * connections from idle ones) and in two 'close' listeners on the response.
 * A stream's response ends only with the stream, so each open stream would
 * keep its whole hapi request (route, headers, logger, plugin state: a
 * quarter of what an idle stream holds) for as long as it stays open. Once
 * the stream has its connection, hapi is done with the request (abandoned,
 * it is finalized and its listeners do nothing more) and the registry ends
 * the stream before the listener stops: the returned function lets go of it.
 * The map is hapi's own, not its API: if it moves, this frees less, and
 * nothing else changes.
 */
function hapiHoldOn(request: Request): () => void {
  const closeListeners = request.raw.res.rawListeners('close') as ((...args: unknown[]) => void)[];
  return () => {
    (request as unknown as { _core?: { actives?: WeakMap<object, unknown> } })._core?.actives?.delete(request.raw.req.socket);
    for (const listener of closeListeners) request.raw.res.removeListener('close', listener);
  };
}

/**
 * Starts the process's event streams: one Redis subscription to the ledger
 * head's announcements feeds one fan-out, which every stream of this
 * process joins. The route answers like every read (the contract's error
 * bodies); shutdown ends the streams before the listener stops.
 */
export async function startEventStreams(server: Server, ctx: ApiContext): Promise<EventStreams> {
  const { settings } = ctx;
  const fanout = new LedgerFanout(ctx.orm.em, { catchUpMs: settings.streamCatchUpMs, onError: (error) => ctx.logger.warn({ err: error }, 'event fan-out could not read the ledger') });
  await fanout.start();
  const subscriber = connectRedis(settings, 'agora-ledger-announcements');
  ctx.health.watchRedis(subscriber, 'ledger-announcements');
  const announcements = new Announcements(subscriber);
  await announcements.listen(ctx.keys.ledgerAnnouncements, (head) => fanout.announce(head));
  const registry = new SseRegistry({ perProcess: settings.streamMaxPerProcess, retryAfterSeconds: baseStreamQuota.retryAfterSeconds }, settings.streamHeartbeatMs);
  const slots = new StreamSlots(ctx.redis, ctx.keys, streamQuota(settings), (error) => ctx.logger.debug({ err: error }, 'event stream slots not renewed'));
  const revocations = new RevocationWatch(ctx, registry);
  await announcements.listen(ctx.keys.credentialsChanged, (hashes) => revocations.check(hashes.split(',')));
  const streams: EventStreams = {
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
  server.route({ method: 'GET', path: eventStreamRoute.path, handler: (request, h) => openStream(ctx, streams, request, h) });
  server.route({
    method: 'POST',
    path: eventStreamRoute.path,
    handler: () => {
      throw new ApiError('method_not_allowed', `${eventStreamRoute.path} is read-only; use GET`);
    },
  });
  // Before the listener stops: a stream never ends by itself, and its socket would keep the listener open until hapi's stop timeout.
  server.ext('onPreStop', () => registry.closeAll());
  return streams;
}

/**
 * Ends the streams whose token is no longer live: at once for the tokens a
 * worker announces (revoked, or their agent's key rotated: only the revoked
 * ones end), and every TOKEN_RECHECK_MS for all of them, in case an
 * announcement was lost to a Redis reconnection.
 */
class RevocationWatch {
  private readonly ctx: ApiContext;
  private readonly registry: SseRegistry;
  private readonly timer: NodeJS.Timeout;

  constructor(ctx: ApiContext, registry: SseRegistry) {
    this.ctx = ctx;
    this.registry = registry;
    this.timer = setInterval(() => this.check(registry.tokenHashes()), TOKEN_RECHECK_MS);
    this.timer.unref();
  }

  check(announced: string[]): void {
    const open = new Set(this.registry.tokenHashes());
    const candidates = announced.filter((hash) => open.has(hash));
    if (candidates.length === 0) return;
    this.ctx.orm.em
      .fork()
      .find(AccessToken, { tokenHash: { $in: candidates }, revokedAt: null }, { fields: ['tokenHash'] })
      .then((live) => {
        const stillLive = new Set(live.map((token) => token.tokenHash));
        this.registry.revoke(candidates.filter((hash) => !stillLive.has(hash)));
      })
      // Postgres away: the next check (or the next announcement) tries again.
      .catch((error: unknown) => this.ctx.logger.warn({ err: error }, 'could not check the tokens of open event streams'));
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
