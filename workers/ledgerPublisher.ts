import type { Orm } from '../src/db/orm.ts';
import { pingPostgres } from '../src/db/probes.ts';
import type { Logger } from '../src/logging/logger.ts';
import { outageOf, type DependencyHealth } from '../src/logging/outages.ts';
import { PUBLISH_BATCH } from '../src/ledger/publication.ts';
import { publishAndAnnounce, type MarksState, type PublicationMarks } from '../src/ledger/publisher.ts';

export interface LedgerPublisherLoop {
  /** Publish now rather than at the next tick (a command just committed events). */
  nudge(): void;
  /** Stops after the batch in progress, if any. */
  close(): Promise<void>;
}

const IDLE_MS = 100;
/**
 * How long the marks an announcement returned stand in for a fresh read.
 * Older marks would still be safe to clear against (a newer mark is never
 * cleared), but after an idle pause they could miss a head lost with a Redis
 * restart until a later round; under load rounds follow within milliseconds.
 */
const SEEN_FRESH_MS = 20;
const ERROR_BACKOFF_MS = 1000;

/**
 * The background half of outbox reconciliation (event reads do the other
 * half): publishes whenever something is pending, back to back while batches
 * come out full, otherwise every IDLE_MS or when nudged. Any number of worker
 * processes may run it; the publisher's advisory lock keeps one at a time.
 * Each publication raises the ledger head that event polls answer 304 from (src/store/ledgerMarks.ts).
 */
/**
 * `announceGraceMs` (LEDGER_ANNOUNCE_GRACE_MS): how long a ledger head may
 * stay above the announced one before the publisher announces it itself. A
 * live batch announces its own events, with them, a few milliseconds after its
 * commit; one that died never does. Announced by the publisher, the head goes
 * without its events, which streams then read back from Postgres.
 */
export function startLedgerPublisher(
  orm: Orm,
  logger: Logger,
  health: DependencyHealth,
  marks: PublicationMarks,
  announceGraceMs: number,
): LedgerPublisherLoop {
  let stopped = false;
  let nudged = false;
  let wake: (() => void) | null = null;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (nudged || stopped) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  const loop = async () => {
    let seen: MarksState | null = null;
    let seenAt = 0;
    // A ledger head found above the announced one, and when: overdue once the grace has passed and it is still not announced.
    let unannounced: string | null = null;
    let unannouncedAt = 0;
    while (!stopped) {
      const committed = nudged;
      nudged = false;
      let delay = IDLE_MS;
      try {
        const now = performance.now();
        const overdue = now - unannouncedAt >= announceGraceMs ? unannounced : null;
        const round = await publishAndAnnounce(orm.em, marks, { committed, seen: now - seenAt <= SEEN_FRESH_MS ? seen : null, overdue });
        seen = round.marks;
        seenAt = performance.now();
        const { behind } = round;
        if (behind === null) unannounced = null;
        // A new one, unless the one already watched is still not announced (its clock keeps running).
        else if (unannounced === null || BigInt(behind.announced) >= BigInt(unannounced))
          [unannounced, unannouncedAt] = [behind.ledger, seenAt];
        if (round.published === PUBLISH_BATCH) delay = 0;
      } catch (error) {
        seen = null;
        delay = ERROR_BACKOFF_MS;
        // An outage is one line for the whole process (DependencyHealth); anything else is a real failure.
        const dependency = outageOf(error);
        if (dependency) health.reportFailure(dependency, error as Error, () => pingPostgres(orm));
        else logger.error({ err: error }, 'ledger publication failed');
      }
      if (delay > 0) await pause(delay);
    }
  };
  const running = loop();

  return {
    nudge() {
      nudged = true;
      wake?.();
    },
    async close() {
      stopped = true;
      wake?.();
      await running;
    },
  };
}
