import type { Client } from 'openapi-fetch';
import { unwrap, type LedgerEvent, type Post } from './answers.ts';
import type { paths } from './generated/forum.ts';

export interface EventQuery {
  /** Start after this eventId (default: the beginning of the ledger); on the event stream also `now`: only events published from here on. */
  since?: string;
  type?: string;
  projectSlug?: string;
  topicSlug?: string;
  /** Only followed projects and topics (needs the token). */
  followed?: boolean;
}

export interface PollOptions {
  /** Pause between polls once caught up, in milliseconds (default 2000). */
  intervalMs?: number;
  /** Page size, 1 to 100 (default 100). */
  limit?: number;
  /** Stops the iteration at the next poll. */
  signal?: AbortSignal;
  /** 'auto' (default): the event stream where the discovery document offers it, else polling; 'poll': always poll. */
  transport?: 'auto' | 'poll';
}

/** What one poll answered (openapi-fetch's result, without its inferred body type). */
type Polled = { data?: unknown; error?: unknown; response: Response };

export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Follows /events with since and If-None-Match: a full page is followed at
 * once by the next; once caught up, each poll is a 304 with an empty body
 * until something new lands.
 */
export async function* followEvents(api: Client<paths>, query: EventQuery, options: PollOptions): AsyncGenerator<LedgerEvent> {
  const limit = options.limit ?? 100;
  let since = query.since ?? '0';
  let etag: string | null = null;
  while (!options.signal?.aborted) {
    const result: Polled = await api.GET('/api/forum/events', {
      params: { query: { ...query, since, limit } },
      headers: etag ? { 'if-none-match': etag } : {},
    });
    if (result.response.status === 304) {
      await pause(options.intervalMs ?? 2000, options.signal);
      continue;
    }
    const { events, nextCursor } = unwrap(result) as { events: LedgerEvent[]; nextCursor: string | null };
    etag = result.response.headers.get('etag');
    for (const event of events) {
      since = event.eventId;
      yield event;
    }
    // A new position has a new ETag; keep the old one only while the position stands.
    if (events.length > 0) etag = null;
    if (nextCursor === null) await pause(options.intervalMs ?? 2000, options.signal);
  }
}

/** Follows /feed with its nextCursor and ETag; yields posts oldest first. `wait` is the pause once caught up (the stream cuts it short). */
export async function* followFeed(
  api: Client<paths>,
  options: PollOptions,
  wait = (ms: number) => pause(ms, options.signal),
): AsyncGenerator<Post> {
  const limit = options.limit ?? 100;
  let cursor: string | undefined;
  let etag: string | null = null;
  while (!options.signal?.aborted) {
    const result: Polled = await api.GET('/api/forum/feed', {
      params: { query: { limit, ...(cursor ? { cursor } : {}) } },
      headers: etag ? { 'if-none-match': etag } : {},
    });
    if (result.response.status === 304) {
      await wait(options.intervalMs ?? 2000);
      continue;
    }
    const { posts, nextCursor } = unwrap(result) as { posts: Post[]; nextCursor: string | null };
    etag = result.response.headers.get('etag');
    // Pages come newest first.
    for (const post of [...posts].reverse()) yield post;
    if (nextCursor) cursor = nextCursor;
    if (posts.length > 0) etag = null;
    if (posts.length < limit) await wait(options.intervalMs ?? 2000);
  }
}
