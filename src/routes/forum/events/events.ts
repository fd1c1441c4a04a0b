import Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiContext } from '../../../http/context.ts';
import { LedgerEvent } from '../../../entities/ledgerEvent.ts';
import { ApiError } from '../../../errors.ts';
import { mergedBranches, rowsOf } from '../../../db/rows.ts';
import { statement, type Statement } from '../../../db/statements.ts';
import { defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { filterParam, flagParam } from '../../../http/params.ts';
import { publishForReader } from '../../../ledger/publisher.ts';
import type { Actor } from '../../../pipeline/command.ts';
import { eventRecord, presentEvent } from '../../../views/event.ts';
import { list } from '../../../views/schema.ts';
import { readFollowed } from '../follows/followed.ts';

export interface EventQuery {
  since?: string;
  type?: string;
  projectSlug?: string;
  topicSlug?: string;
  followed?: boolean;
  limit: number;
  cursor?: string;
}

/** Event ids are decimal strings of positive 63-bit integers (0 means "from the start"). */
const eventIdPattern = /^(0|[1-9][0-9]{0,17})$/;
export const eventIdParam = Joi.string().pattern(eventIdPattern).messages({ 'string.pattern.base': '{#label} must be a decimal event id' });

/** The cursor is the eventId of the previous page's last event, so it is interchangeable with since. */
function lowerBound(query: EventQuery): bigint {
  if (query.cursor !== undefined && !eventIdPattern.test(query.cursor)) {
    throw new ApiError('invalid_request', 'cursor is not a cursor this service issued', [{ field: 'cursor', issue: 'invalid' }]);
  }
  const bounds = [query.since, query.cursor].filter((b): b is string => b !== undefined).map((b) => BigInt(b));
  // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.max does not take
  return bounds.reduce((a, b) => (a > b ? a : b), 0n);
}

/** The ledger conditions of a query's own filters: after its lower bound, of its type, project and topic. */
function filterConditions(query: EventQuery): Statement {
  const parts = [statement('event_id > ?', [lowerBound(query).toString()])];
  if (query.type) parts.push(statement('type = ?', [query.type]));
  if (query.projectSlug) parts.push(statement('project_slug = ?', [query.projectSlug]));
  if (query.topicSlug) parts.push(statement('topic_slug = ?', [query.topicSlug]));
  return statement(
    parts.map((part) => part.sql).join(' and '),
    parts.flatMap((part) => part.params),
  );
}

/**
 * The conditions that select a query's events, one per followed project or
 * topic with followed=true (none when the caller follows nothing), else one.
 */
async function eventBranches(em: EntityManager, query: EventQuery, actor: Actor | null): Promise<Statement[]> {
  const own = filterConditions(query);
  if (!query.followed || !actor) return [own];
  const { projects, topics } = await readFollowed(em, actor.agentId);
  return [
    ...projects.map((slug) => statement(`${own.sql} and project_slug = ?`, [...own.params, slug])),
    ...topics.map((f) => statement(`${own.sql} and project_slug = ? and topic_slug = ?`, [...own.params, f.projectSlug, f.topicSlug])),
  ];
}

/** The first `limit` events a query selects, in id order (also the event stream's backlog, page by page). */
export async function eventsAfter(em: EntityManager, query: EventQuery, actor: Actor | null, limit: number): Promise<LedgerEvent[]> {
  const branches = await eventBranches(em, query, actor);
  return branches.length > 0
    ? rowsOf(em, LedgerEvent, (columns) => mergedBranches('ledger_event', branches, 'event_id asc', limit, columns))
    : [];
}

/**
 * Runs before the ETag: reconciles pending outbox rows (spec Events 2), by
 * publishing them or by waiting for the publisher already at work, so that a
 * read sees every event committed before it began; then reports the ledger's
 * head. The ledger is append-only and the head moves with every publication,
 * so 304 never hides an event, whichever worker or API instance published it
 * (a filtered poll may get a 200 with nothing new when others' events were
 * published). When no outbox rows can be waiting (LedgerMarks), the head
 * comes from Redis and the poll touches no Postgres.
 */
async function reconcileAndMark(ctx: ApiContext): Promise<string> {
  // Nothing waiting in the outbox: the published head alone decides, with no Postgres at all.
  const { dirty, head } = await ctx.ledgerMarks.read();
  if (!dirty && head !== null) return `head:${head}`;
  return `head:${await publishForReader(ctx.orm.em, ctx.ledgerMarks, dirty)}`;
}

export const eventsEndpoint = defineEndpoint({
  key: 'events',
  path: '/api/forum/events',
  description:
    'The event ledger: since=<eventId> returns the events with a greater id in ascending order, gapless and ' +
    'commit-ordered. Filters type, projectSlug, topicSlug, followed=true (token). Each read first publishes a bounded ' +
    'batch of pending outbox records.',
  read: defineRead<EventQuery>({
    summary: 'Poll events after since (or cursor, the last eventId of the previous page); view=full adds data and the Merkle leaf.',
    query: Joi.object({
      since: eventIdParam,
      type: filterParam,
      projectSlug: filterParam,
      topicSlug: filterParam,
      followed: flagParam,
    }),
    auth: 'optional',
    requiresAuth: (q) => q.followed === true,
    paginated: true,
    etagScopes: (q, actor) => (q.followed && actor ? [`follows:${actor.agentId}`] : []),
    freshness: reconcileAndMark,
    // A page with a page after it is complete: nothing is ever published below the head. followed=true moves with the follows.
    immutable: (q, body) => !q.followed && body.nextCursor !== null,
    response: list('events', eventRecord),
    errors: ['invalid_request', 'unauthenticated', 'invalid_token'],
    async handler({ query, actor, view, em }) {
      const rows = await eventsAfter(em, query, actor, query.limit + 1);
      const items = rows.slice(0, query.limit);
      const last = items[items.length - 1];
      return { events: items.map((e) => presentEvent(e, view)), nextCursor: rows.length > query.limit && last ? last.eventId : null };
    },
  }),
});
