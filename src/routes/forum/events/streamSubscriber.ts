import type { EntityManager } from '@mikro-orm/postgresql';
import { Follow } from '../../../entities/follow.ts';
import type { LedgerEvent } from '../../../entities/ledgerEvent.ts';
import type { FannedEvent, FanoutListener } from '../../../ledger/fanout.ts';
import { ledgerHead } from '../../../ledger/publisher.ts';
import type { SseConnection } from '../../../http/sse.ts';
import { SseMessage } from '../../../http/sse.ts';
import type { Actor } from '../../../pipeline/command.ts';
import { presentEvent } from '../../../views/event.ts';
import type { View } from '../../../views/view.ts';
import { eventsAfter, type EventQuery } from './events.ts';

/** The filters of /events a stream takes, and where it starts. */
export interface StreamFilters {
  type?: string;
  projectSlug?: string;
  topicSlug?: string;
  followed?: boolean;
}

type FollowTarget = Pick<Follow, 'targetType' | 'projectSlug' | 'topicSlug'>;

/** Rows per backlog read. */
const BACKLOG_PAGE = 500;
/** Live events held for a stream while it reads its backlog or its follows; past this it is cut like a slow client. */
const MAX_PENDING = 10_000;

function encode(row: LedgerEvent, view: View): SseMessage {
  return SseMessage.event(row.eventId, row.type, JSON.stringify(presentEvent(row, view)));
}

/**
 * One client's stream: the backlog from the ledger, then the process's
 * fan-out. It joins the fan-out before reading the backlog and holds what
 * arrives meanwhile, so nothing falls between the two; `position` (the last
 * ledger id it has passed on or passed over) drops what both deliver. Ids
 * leave strictly increasing, each once.
 *
 * followed=true: the backlog uses the follows as they stand when it is read
 * (the /events filter); live events the follows as loaded, and a follow
 * event (follow.created / follow.removed name no actor: follows are private)
 * makes every followed stream load its follows again before it goes on, so
 * a new follow counts from its event on.
 */
export class StreamSubscriber implements FanoutListener {
  /** The root EntityManager: each read forks it, so an open stream holds no identity map. */
  private readonly root: EntityManager;
  private readonly connection: SseConnection;
  private readonly filters: StreamFilters;
  private readonly actor: Actor | null;
  private readonly view: View;
  private readonly onError: (error: unknown) => void;
  private position: bigint;
  /** since=now: the position is the ledger head once the stream has joined the fan-out. */
  private readonly fromHead: boolean;
  private follows: FollowTarget[] = [];
  /** Non-null while the live events cannot be sent yet (backlog, follows loading). */
  private pending: FannedEvent<SseMessage>[] | null = [];

  constructor(init: {
    root: EntityManager;
    connection: SseConnection;
    filters: StreamFilters;
    actor: Actor | null;
    view: View;
    after: bigint | 'now';
    onError: (error: unknown) => void;
  }) {
    this.root = init.root;
    this.connection = init.connection;
    this.filters = init.filters;
    this.actor = init.actor;
    this.view = init.view;
    this.fromHead = init.after === 'now';
    this.position = init.after === 'now' ? 0n : init.after;
    this.onError = init.onError;
  }

  /** Call after joining the fan-out: reads the backlog, then sends what the fan-out delivered meanwhile and goes live. */
  async start(): Promise<void> {
    try {
      await this.loadFollows();
      if (this.fromHead) this.position = BigInt(await ledgerHead(this.root.fork()));
      await this.readBacklog();
      await this.sendHeld();
    } catch (error) {
      this.onError(error);
    }
  }

  deliver(events: FannedEvent<SseMessage>[]): void {
    if (this.connection.closed) return;
    if (this.pending) {
      for (const event of events) this.pending.push(event);
      // Held events count against the stream like unsent bytes would: a stream that cannot keep up is cut.
      if (this.pending.length > MAX_PENDING) {
        this.pending = [];
        this.connection.cut();
      }
      return;
    }
    this.send(events);
  }

  /**
   * Live: the delivery written at once, in one write (a client that falls behind is cut), up to a follow
   * event that makes a followed stream reload its follows.
   */
  private send(events: FannedEvent<SseMessage>[]): void {
    if (this.connection.fellBehind()) return;
    const out: SseMessage[] = [];
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      if (event.id <= this.position) continue;
      this.position = event.id;
      if (this.matches(event.row)) out.push(this.encoded(event));
      if (this.followsMove(event)) {
        this.pending = events.slice(i + 1);
        void this.loadFollows()
          .then(() => this.sendHeld())
          .catch((error: unknown) => this.onError(error));
        break;
      }
    }
    this.connection.write(out);
  }

  /** Sends what was held, paced by the client (a burst after a long backlog is not a slow client), then goes live. */
  private async sendHeld(): Promise<void> {
    while (this.pending && this.pending.length > 0) {
      const held = this.pending;
      this.pending = [];
      for (const event of held) {
        if (event.id <= this.position) continue;
        this.position = event.id;
        if (this.matches(event.row) && !(await this.connection.writePaced(this.encoded(event)))) return;
        if (this.followsMove(event)) await this.loadFollows();
      }
    }
    this.pending = null;
  }

  private followsMove(event: FannedEvent<SseMessage>): boolean {
    return this.filters.followed === true && event.row.type.startsWith('follow.');
  }

  private encoded(event: FannedEvent<SseMessage>): SseMessage {
    let message = event.encoded.get(this.view);
    if (message === undefined) event.encoded.set(this.view, (message = encode(event.row, this.view)));
    return message;
  }

  private matches(row: LedgerEvent): boolean {
    const { type, projectSlug, topicSlug, followed } = this.filters;
    if (type && row.type !== type) return false;
    if (projectSlug && row.projectSlug !== projectSlug) return false;
    if (topicSlug && row.topicSlug !== topicSlug) return false;
    if (!followed) return true;
    return this.follows.some((f) => row.projectSlug === f.projectSlug && (f.targetType === 'project' || row.topicSlug === f.topicSlug));
  }

  private async loadFollows(): Promise<void> {
    if (!this.filters.followed || !this.actor) return;
    this.follows = await this.root
      .fork()
      .find(Follow, { agentId: this.actor.agentId }, { fields: ['targetType', 'projectSlug', 'topicSlug'] });
  }

  /** The ledger after `position`, page by page, with the read's own filter, each event written once the client took enough of those before. */
  private async readBacklog(): Promise<void> {
    for (;;) {
      const em = this.root.fork();
      const query: EventQuery = { ...this.filters, since: this.position.toString(), limit: BACKLOG_PAGE };
      const rows = await eventsAfter(em, query, this.actor, BACKLOG_PAGE);
      for (const row of rows) {
        this.position = BigInt(row.eventId);
        if (!(await this.connection.writePaced(encode(row, this.view)))) return;
      }
      if (rows.length < BACKLOG_PAGE || this.connection.closed) return;
    }
  }
}
