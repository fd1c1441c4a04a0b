import type { Client } from 'openapi-fetch';
import { AgoraError, type LedgerEvent, type Post } from './answers.ts';
import type { paths } from './generated/forum.ts';
import { followEvents, followFeed, pause, type EventQuery, type PollOptions } from './polling.ts';

/** One Server-Sent Events message. */
interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
}

/**
 * Parses a text/event-stream body into messages (WHATWG HTML, server-sent
 * events: fields, comments, blank-line dispatch) until it ends or `signal`
 * aborts. The abort cancels the body itself, not only through the request's
 * signal: that reaches the response through the copies the transport makes
 * of the request, and under load a stream was seen to stay open after its
 * abort, and the `agora load` process with it (test/sdk/load/run.test.ts).
 */
async function* sseMessages(body: ReadableStream<Uint8Array>, signal: AbortSignal | undefined): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  if (signal?.aborted) cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    yield* messagesOf(reader);
  } finally {
    // Also when the caller stops early (breaks out of its loop): the connection goes with the body.
    signal?.removeEventListener('abort', cancel);
    cancel();
  }
}

async function* messagesOf(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let message: SseMessage = {};
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    buffer += decoder.decode(read.value, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (message.data !== undefined || message.retry !== undefined) yield message;
        message = {};
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
      else if (field === 'id') message.id = value;
      else if (field === 'event') message.event = value;
      else if (field === 'retry' && /^\d+$/.test(value)) message.retry = Number(value);
    }
  }
}

export interface StreamSource {
  baseUrl: string;
  /** The SDK's transport (token, retries on 429 and 503). */
  fetch: (input: Request) => Promise<Response>;
  /** The stream's path as the discovery document lists it, or null when the service offers none. */
  path: () => Promise<string | null>;
}

/** Query parameters of the stream: the event filters with since (an eventId, or `now` for only what is published from here on). */
function streamUrl(source: StreamSource, path: string, query: EventQuery & { since: string }): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== false) params.set(name, String(value));
  return `${source.baseUrl}${path}?${params.toString()}`;
}

/**
 * Follows the ledger over the event stream, reconnecting after each end or
 * cut with the last eventId it yielded (the stream resumes exactly after it).
 * Yields null once when the service offers no stream, so the caller polls.
 */
async function* streamEvents(
  source: StreamSource,
  query: EventQuery,
  options: PollOptions & { onOpen?: () => void },
): AsyncGenerator<LedgerEvent | null> {
  const path = await source.path();
  if (path === null) {
    yield null;
    return;
  }
  let since = query.since ?? '0';
  let reconnectMs = 1000;
  while (!options.signal?.aborted) {
    let response: Response;
    try {
      response = await source.fetch(
        new Request(streamUrl(source, path, { ...query, since }), {
          headers: { accept: 'text/event-stream' },
          signal: options.signal ?? null,
        }),
      );
    } catch {
      if (options.signal?.aborted) return;
      // The instance went away: try again (a balancer sends the next attempt elsewhere).
      await pause(reconnectMs, options.signal);
      continue;
    }
    // Aborted while the answer was on its way: the abort may not have reached it (sseMessages).
    if (options.signal?.aborted) {
      await response.body?.cancel().catch(() => {});
      return;
    }
    if (response.status === 404 || response.status === 405) {
      await response.body?.cancel();
      yield null;
      return;
    }
    if (!response.ok || !response.body) {
      const body = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
      // A refusal of the request itself (bad token, bad filter) will not change by retrying.
      if (response.status < 500 && response.status !== 429)
        throw new AgoraError(response.status, body.error?.code ?? 'http_error', body.error?.message ?? response.statusText);
      await pause(reconnectMs, options.signal);
      continue;
    }
    options.onOpen?.();
    try {
      for await (const message of sseMessages(response.body, options.signal)) {
        if (message.retry !== undefined) reconnectMs = message.retry;
        if (message.data === undefined) continue;
        const event = JSON.parse(message.data) as LedgerEvent;
        since = event.eventId;
        yield event;
      }
    } catch {
      if (options.signal?.aborted) return;
    }
    // The stream ended (shutdown) or was cut (fell behind): resume after the last event yielded.
    await pause(reconnectMs, options.signal);
  }
}

/** The ledger from the stream where the service offers one, else (or once it stops offering it) by polling from the same position. */
export async function* followLedger(
  source: StreamSource,
  api: Client<paths>,
  query: EventQuery,
  options: PollOptions,
): AsyncGenerator<LedgerEvent> {
  let since = query.since;
  if (options.transport !== 'poll') {
    for await (const event of streamEvents(source, query, options)) {
      if (event === null) break;
      since = event.eventId;
      yield event;
    }
    if (options.signal?.aborted) return;
  }
  yield* followEvents(api, { ...query, since: since === 'now' ? undefined : since }, options);
}

/** Wakes one waiter early; a ring with nobody waiting is kept for the next wait. */
class Doorbell {
  private rung = false;
  private waiter: (() => void) | null = null;

  ring(): void {
    this.rung = true;
    this.waiter?.();
  }

  async wait(ms: number, signal: AbortSignal): Promise<void> {
    if (!this.rung) {
      const timer = new Promise<void>((resolve) => (this.waiter = resolve));
      await Promise.race([timer, pause(ms, signal)]);
      this.waiter = null;
    }
    this.rung = false;
  }
}

/** How long the feed waits between polls while the stream watches for new followed posts (a safety net only). */
const STREAMED_FEED_POLL_MS = 60_000;

/**
 * The feed, polled when the stream says a followed post was published (and
 * when the stream (re)connects, so nothing published before it opened waits),
 * else every STREAMED_FEED_POLL_MS; by plain polling without a stream.
 */
export async function* followFeedLive(source: StreamSource, api: Client<paths>, options: PollOptions): AsyncGenerator<Post> {
  if (options.transport === 'poll' || (await source.path()) === null) {
    yield* followFeed(api, options);
    return;
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  options.signal?.addEventListener('abort', stop, { once: true });
  const bell = new Doorbell();
  const watch = async () => {
    const posts = streamEvents(
      source,
      { followed: true, type: 'post.created', since: 'now' },
      { signal: controller.signal, onOpen: () => bell.ring() },
    );
    for await (const event of posts) {
      // No stream after all: the feed polls at its own interval.
      if (event === null) return;
      bell.ring();
    }
  };
  let streaming = true;
  void watch().then(
    () => (streaming = false),
    () => (streaming = false),
  );
  try {
    yield* followFeed(api, { ...options, signal: controller.signal }, (ms) =>
      bell.wait(streaming ? STREAMED_FEED_POLL_MS : ms, controller.signal),
    );
  } finally {
    stop();
    options.signal?.removeEventListener('abort', stop);
  }
}
