import type { EntityManager } from '@mikro-orm/postgresql';
import { findRows } from '../db/rows.ts';
import { LedgerEvent } from '../entities/ledgerEvent.ts';
import { decodeAnnouncement, headOf } from './announcement.ts';
import { ledgerHead } from './publisher.ts';

/** One published event as an API process fans it out: read once, encoded once per view for all its streams. */
export interface FannedEvent<Encoded = unknown> {
  id: bigint;
  row: LedgerEvent;
  /** Encodings already made (by the streams, in their wire form), by view: shared by every stream that sends the event. */
  encoded: Map<string, Encoded>;
}

/** What receives the events of a fan-out, in id order, each once. */
export interface FanoutListener {
  deliver(events: FannedEvent[]): void;
}

export interface FanoutOptions {
  /** How often to compare the head in Postgres with what was fanned out (an announcement can be lost). */
  catchUpMs: number;
  /** Rows per ledger read. */
  batch?: number;
  onError?: (error: unknown) => void;
}

/**
 * One per API process: follows the ledger's head and hands every event past
 * it to the process's event streams. An announcement (from the publishers
 * through Redis pub/sub) carries the new head and, usually, the events of the
 * publication that raised it: when those follow the last event fanned out
 * they are handed on as they are. Otherwise (a lost or skipped announcement,
 * one published without its events, a pump already reading) the events come
 * from Postgres, as the range after the last one fanned out, so a lost
 * announcement costs latency, never an event. A timer reads the head from
 * Postgres while streams are open, which bounds that latency and carries the
 * streams through a Redis outage.
 */
export class LedgerFanout {
  private readonly root: EntityManager;
  private readonly options: Required<Omit<FanoutOptions, 'onError'>> & Pick<FanoutOptions, 'onError'>;
  /** Listeners of every event, and listeners of one project's events only (most streams filter by project: each event then costs only its own). */
  private readonly everything = new Set<FanoutListener>();
  private readonly byProject = new Map<string, Set<FanoutListener>>();
  private readonly keys = new Map<FanoutListener, string | null>();
  /** The last id handed to listeners (or skipped while there were none). */
  private fanned = 0n;
  /** The highest head announced or seen. */
  private target = 0n;
  /** Set and cleared synchronously by pump, so a raise never finds a pump that has already decided to stop. */
  private pumping = false;
  private timer: NodeJS.Timeout | null = null;
  /** Announced events not handed out yet: the announcements of one read from Redis go out together (see announce). */
  private queued: FannedEvent[] = [];
  private flushScheduled = false;

  constructor(root: EntityManager, options: FanoutOptions) {
    this.root = root;
    this.options = { batch: 500, ...options };
  }

  async start(): Promise<void> {
    this.fanned = this.target = BigInt(await ledgerHead(this.root.fork()));
    this.timer = setInterval(() => void this.catchUp(), this.options.catchUpMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.queued = [];
    this.everything.clear();
    this.byProject.clear();
    this.keys.clear();
  }

  get size(): number {
    return this.keys.size;
  }

  /**
   * From now on the listener gets every event fanned out (or, given a
   * project, that project's events); what came before is its own to read
   * from the ledger. It may also get a few events fanned out just before it
   * joined (announced events wait for the end of their read, see announce):
   * a listener drops ids it has already passed.
   */
  add(listener: FanoutListener, projectSlug: string | null = null): void {
    this.keys.set(listener, projectSlug);
    if (projectSlug === null) this.everything.add(listener);
    else {
      let set = this.byProject.get(projectSlug);
      if (!set) this.byProject.set(projectSlug, (set = new Set()));
      set.add(listener);
    }
  }

  remove(listener: FanoutListener): void {
    const projectSlug = this.keys.get(listener);
    this.keys.delete(listener);
    if (projectSlug === undefined) return;
    if (projectSlug === null) this.everything.delete(listener);
    else {
      const set = this.byProject.get(projectSlug);
      set?.delete(listener);
      if (set?.size === 0) this.byProject.delete(projectSlug);
    }
  }

  /**
   * An announcement (src/ledger/announcement.ts); anything else is ignored.
   * Its events are handed out once the read that brought it is parsed, with
   * those of every other announcement in that read: a stream then takes one
   * socket write for all of them. When the API falls behind, the
   * announcements that waited meanwhile arrive in one read, so the fan-out
   * writes less exactly when it has least time.
   */
  announce(message: string): void {
    // Nobody listens: its events would be dropped unread, so only the head is taken (the events' JSON is most of the cost).
    const announcement = decodeAnnouncement(this.keys.size > 0 ? message : headOf(message));
    if (!announcement) return;
    const { head, events } = announcement;
    // Its events are the next ones and no read is under way (which would hand them too): no need to read them back.
    if (events && !this.pumping && BigInt(events[0]!.eventId) === this.fanned + 1n) {
      this.fanned = head;
      if (this.keys.size > 0) this.handSoon(events.map((row) => ({ id: BigInt(row.eventId), row, encoded: new Map() })));
    }
    // Reads whatever a higher target (the catch-up's) still leaves unfanned.
    this.raise(head);
  }

  private async catchUp(): Promise<void> {
    if (this.keys.size === 0) return;
    try {
      this.raise(BigInt(await ledgerHead(this.root.fork())));
    } catch (error) {
      this.options.onError?.(error);
    }
  }

  /** Also restarts a pump that gave up on a failed read (the catch-up timer calls it with the same head). */
  private raise(head: bigint): void {
    if (head > this.target) this.target = head;
    if (!this.pumping && this.fanned < this.target) void this.pump();
  }

  /**
   * Reads and hands out up to the target. The loop's last check and the flag's
   * reset run in one synchronous stretch, so no raise can slip between them
   * and find a pump that has already decided to stop.
   */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.fanned < this.target) {
        // Nobody listens: nothing to read. A stream that opens later reads its backlog from the ledger.
        if (this.keys.size === 0) {
          this.fanned = this.target;
          return;
        }
        const rows = await this.readAfterFanned();
        // Postgres is away (the target stands: the catch-up timer restarts the pump), or the announced
        // head is not visible here yet (the timer raises it again once it is).
        if (rows === null) return;
        if (rows.length === 0) {
          this.target = this.fanned;
          return;
        }
        const events = rows.map((row) => ({ id: BigInt(row.eventId), row, encoded: new Map() }));
        this.fanned = events[events.length - 1]!.id;
        // Announced events still queued come before these: out first, in id order.
        this.flush();
        this.hand(events);
      }
    } finally {
      this.pumping = false;
    }
  }

  private async readAfterFanned(): Promise<LedgerEvent[] | null> {
    try {
      return await findRows(
        this.root.fork(),
        LedgerEvent,
        { eventId: { $gt: this.fanned.toString(), $lte: this.target.toString() } },
        { orderBy: { eventId: 'asc' }, limit: this.options.batch },
      );
    } catch (error) {
      this.options.onError?.(error);
      return null;
    }
  }

  private handSoon(events: FannedEvent[]): void {
    this.queued.push(...events);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // A microtask: after the subscriber has parsed the whole read, before any other I/O.
    queueMicrotask(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.queued.length === 0) return;
    const events = this.queued;
    this.queued = [];
    this.hand(events);
  }

  private hand(events: FannedEvent[]): void {
    for (const listener of this.everything) listener.deliver(events);
    if (this.byProject.size === 0) return;
    const perProject = new Map<string, FannedEvent[]>();
    for (const event of events) {
      const slug = event.row.projectSlug;
      if (!slug || !this.byProject.has(slug)) continue;
      const list = perProject.get(slug);
      if (list) list.push(event);
      else perProject.set(slug, [event]);
    }
    for (const [slug, list] of perProject) for (const listener of this.byProject.get(slug) ?? []) listener.deliver(list);
  }
}
