import type { Request, ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';
import type { ApiContext } from '../../../http/context.ts';
import { ApiError } from '../../../errors.ts';
import { headerValue, type Authenticated } from '../../../http/auth.ts';
import { defineEndpoint } from '../../../http/endpoint.ts';
import { requestIdOf } from '../../../http/requestLog.ts';
import { viewParam } from '../../../http/params.ts';
import { baseStreamQuota, streamQuota } from '../../../http/quotas.ts';
import { limitReached, SseMessage } from '../../../http/sse.ts';
import type { View } from '../../../views/view.ts';
import { eventIdParam, eventsEndpoint } from './events.ts';
import { StreamSubscriber, type StreamFilters } from './streamSubscriber.ts';

/** How long a client waits before reconnecting (the SSE `retry:` field), in milliseconds. */
const RECONNECT = new SseMessage('retry: 1000\n\n');

interface StreamQuery extends StreamFilters {
  since?: string;
  view: View;
}

/**
 * Where the stream resumes: the greater of since and Last-Event-ID; since=now
 * is the head when the stream opens, unless an EventSource reconnecting with
 * the same URL sends Last-Event-ID.
 */
function resumeAfter(request: Request, since: string | undefined): bigint | 'now' {
  const header = headerValue(request, 'last-event-id');
  if (header !== undefined && eventIdParam.validate(header).error) {
    throw new ApiError('invalid_request', 'Last-Event-ID must be a decimal event id', [
      { field: 'Last-Event-ID', issue: 'must be a decimal event id' },
    ]);
  }
  if (since === 'now') return header === undefined ? 'now' : BigInt(header);
  const bounds = [since, header].filter((b): b is string => b !== undefined).map((b) => BigInt(b));
  // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.max does not take
  return bounds.reduce((a, b) => (a > b ? a : b), 0n);
}

async function openStream(
  ctx: ApiContext,
  request: Request,
  h: ResponseToolkit,
  query: StreamQuery & { access_token?: string },
  auth: Authenticated | null,
) {
  const { since, view, access_token: _token, ...filters } = query;
  const { streams } = ctx;
  const after = resumeAfter(request, since);
  const actor = auth?.actor ?? null;
  // HEAD (hapi answers it from this GET route): a stream's headers, and no stream to hold open.
  if (request.method === 'head')
    return h.response().code(200).type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache, no-transform');
  const owner = actor ? `agent:${actor.agentId}` : `address:${request.info.remoteAddress}`;
  streams.registry.checkRoom();
  const slot = await streams.slots.take(owner);
  if (!slot)
    throw limitReached(
      `at most ${streamQuota(ctx.settings)} event streams at once per agent (or source address without a token)`,
      streamQuota(ctx.settings),
      baseStreamQuota.retryAfterSeconds,
    );
  // The client may have hung up during any await above: then nothing is registered, and the slot goes back at once.
  const response = request.raw.res;
  const hapiCloseListeners = response.rawListeners('close') as ((...args: unknown[]) => void)[];
  if (response.closed) {
    streams.slots.release(slot);
    return h.abandon;
  }
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
  // hapi is done with the request: its own close listeners on the response would keep it for as long as the stream stays open.
  for (const listener of hapiCloseListeners) response.removeListener('close', listener);
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

/** The live ledger: declared like every endpoint (openapi.json, the discovery document and the router read it). */
export const eventStreamEndpoint = defineEndpoint({
  key: 'eventStream',
  path: '/api/forum/events/stream',
  description:
    'text/event-stream. Each event is one message: id: <eventId>, event: <type>, data: <the event exactly as ' +
    '/api/forum/events returns it in the same view>. Filters and authentication are those of /api/forum/events ' +
    '(followed=true needs a token; access_token works on this GET). Resume with the Last-Event-ID header (or since; ' +
    'given both, the greater wins): the events after it come from the ledger, then the stream goes live, strictly ' +
    'increasing, none missed and none twice. A comment line keeps an idle stream open. A client that reads slower than ' +
    'events arrive is disconnected once its buffer is full and resumes from its last id; so does every client when the ' +
    "instance shuts down. A stream opened with a token ends within a second of that token's revocation (revoke, " +
    'revoke-others, a key rotation with revokeTokens), on every instance, after a last comment line (": closed: ..."); ' +
    'reconnecting with the token answers 401. The per-agent (or per source address) limit counts streams on every ' +
    "instance together; a dead instance's streams stop counting within 6 seconds.",
  stream: {
    summary: 'The event ledger as Server-Sent Events: the backlog after since / Last-Event-ID, then every new event as it is published.',
    query: (eventsEndpoint.read?.query ?? Joi.object()).keys({
      since: Joi.alternatives(eventIdParam, Joi.string().valid('now')).description(
        'An eventId, or now: only events published after the stream opens (a Last-Event-ID header takes precedence)',
      ),
      view: viewParam,
      access_token: Joi.string().max(200),
    }),
    auth: 'optional',
    requiresAuth: (query: StreamFilters) => query.followed === true,
    rateClass: 'stream',
    errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'rate_limited', 'service_unavailable'],
    open: openStream,
  },
});
