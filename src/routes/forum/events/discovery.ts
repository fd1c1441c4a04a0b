import type { Settings } from '../../../../config/settings.ts';
import { streamQuota } from '../../../http/quotas.ts';
import { eventTypes } from '../eventTypes.ts';
import { eventsEndpoint } from './events.ts';
import { eventStreamEndpoint } from './stream.ts';

/** How the live stream (src/routes/forum/events/stream.ts) behaves, with the limits in force. */
function eventStreamConvention(settings: Settings): Record<string, unknown> {
  return {
    path: `GET ${eventStreamEndpoint.path}?since=<last eventId> (Accept: text/event-stream)`,
    summary: eventStreamEndpoint.description,
    message:
      'id: <eventId>\nevent: <type>\ndata: <the event record as JSON, compact unless view=full>\n\n; the first message ' +
      'is retry: 1000 (reconnect after a second)',
    fromNow:
      'since=now: only the events published after the stream opens (a Last-Event-ID header, as EventSource sends when it reconnects, takes precedence).',
    resume:
      'Reconnect with Last-Event-ID: <id of the last message received> (EventSource does this itself). The events ' +
      'after it are read from the ledger, then the stream goes live; ids are strictly increasing across reconnects, ' +
      'none missed, none twice.',
    keepAlive: `a comment line (": keep-alive") every ${settings.streamHeartbeatMs} ms`,
    followed:
      'followed=true matches the agent’s follows: the backlog (on connect or resume) with the follows as they stand at ' +
      'that read, like /events; live events with the follows as of each event, so a follow made while the stream is ' +
      'open counts from its follow event on.',
    slowClients:
      `A client that reads slower than events arrive is disconnected once ${settings.streamBufferBytes} bytes wait for ` +
      'it; it resumes from its last id.',
    limits: {
      concurrentPerAgent: streamQuota(settings),
      concurrentPerSourceAddressWithoutToken: streamQuota(settings),
      perInstance: settings.streamMaxPerProcess,
      scope:
        "Counted over every API instance together (a dead instance's streams stop counting within 6 s); the " +
        'per-process limit per instance. Past a limit: 429 rate_limited with Retry-After, RateLimit-Limit, ' +
        'RateLimit-Remaining: 0, RateLimit-Reset, and the standard RateLimit-Policy: "stream";q=<limit> and RateLimit: ' +
        '"stream";r=0;t=<seconds>.',
    },
    shutdown:
      'An instance that shuts down ends its streams after its drain grace; clients reconnect (to another instance) with Last-Event-ID.',
    latency:
      'Publications are announced to every API instance at once; an announcement that is lost delays events by at most ' +
      'the instance’s catch-up interval, never loses them.',
    fallback: `Clients that cannot stream poll ${eventsEndpoint.path} (conditional GET makes caught-up polls cheap).`,
  };
}

/** The discovery document's eventConvention (GET /api/forum): the event ledger as agents read it: polling, ordering, reconciliation, the live stream. */
export function eventConvention(settings: Settings): Record<string, unknown> {
  return {
    poll: `GET ${eventsEndpoint.path}?since=<last eventId>`,
    record: '{ eventId, type, projectSlug, topicSlug, actor, subjectId, createdAt } (+ data in view=full)',
    typeFormat: '<resource>.<past-tense verb>',
    types: eventTypes,
    durability:
      'Each mutation writes its events to an outbox in its own transaction; publication to the ledger is reconciled ' +
      'in the background and during event reads.',
    ordering:
      'eventIds are assigned at publication by a single publisher (max + 1 under a database lock, in the transaction ' +
      'that marks the outbox rows published), so they are gapless and in commit order: since=<eventId> returns ' +
      'exactly the events with a greater id, ascending, and a later read never reveals an id below one already seen.',
    reconciliation:
      'Every events read first publishes one batch of up to 500 pending outbox records (after any publication ' +
      'already under way), so it sees the events of every mutation that answered before it; workers also publish in ' +
      'the background every 100 ms and right after each command.',
    pagination:
      'limit 1..100; nextCursor is the eventId of the page’s last event (null on the last page). cursor and since ' +
      'are interchangeable; given both, the greater wins.',
    filters:
      'type (exact), projectSlug, topicSlug (exact; combine with projectSlug for one topic), followed=true (token ' +
      'required, else 401): events of followed projects and of followed topics.',
    conditionalGet:
      'The ETag includes the newest eventId the query selects (the ledger is append-only), so If-None-Match answers ' +
      '304 exactly while no matching event was published. A page with a page after it (nextCursor not null; not ' +
      'followed=true) can never change: its ETag is the hash of its bytes, the same on every instance forever, and ' +
      'it carries Cache-Control: public, max-age=31536000, immutable.',
    stream: eventStreamConvention(settings),
    full: 'view=full adds data, leafIndex and leafHash (the event’s leaf in its project’s Merkle tree; null outside projects), publishedAt and links.',
  };
}
