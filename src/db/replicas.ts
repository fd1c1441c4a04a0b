/**
 * Reads on streaming replicas (DATABASE_REPLICA_URLS), never older than
 * what the reader must see.
 *
 * Positions are WAL LSNs as decimal byte offsets (`pg_lsn - '0/0'`). Every
 * POLL_INTERVAL_MS this process samples the primary's flushed position and
 * each replica's replayed position. A read states the position it needs (its
 * agent's last commit, src/store/commitPositions.ts, and the commits behind
 * its ETag fingerprints) and goes to a replica known to have replayed past
 * it, else to the primary.
 *
 * Lag is measured against the primary's samples, not with
 * pg_last_xact_replay_timestamp(), which stands still while the primary is
 * idle and would make an up-to-date replica look stale: a replica is as fresh
 * as the newest primary sample its replayed position has reached. One that
 * lags past REPLICA_MAX_LAG_MS, or whose poll fails, is skipped; a read that
 * fails on a replica runs again on the primary, so a replica dying costs
 * latency, never a 5xx.
 *
 * Each replica is an ORM of its own (openOrm on its URL) rather than
 * MikroORM's `replicas` option: that option picks a random replica per
 * query, with no way to address one, so neither skipping a lagging or dead
 * replica nor keeping one read's queries on the replica that was checked
 * could be done through it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../errors.ts';
import { outageOf, type DependencyHealth } from '../logging/outages.ts';
import { openOrm, type Orm } from './orm.ts';

const POLL_INTERVAL_MS = 100;
/** A poll not answered by then counts as failed: a hung replica is skipped, not waited for. */
const POLL_TIMEOUT_MS = 1000;
/** Replica connections give up quickly, so a read on a replica that vanished falls back to the primary soon. */
const REPLICA_TIMEOUTS = { connectMs: 1000, queryMs: 10_000 };
/** pg's message when `queryMs` passes. */
const QUERY_TIMEOUT = /Query read timeout/;

const POSITION_SQL = {
  /** On the primary after a COMMIT returned: the WAL written so far, which includes that commit's record. */
  afterCommit: `select (pg_current_wal_lsn() - '0/0')::text as position`,
  /** The primary's flushed WAL, the most a replica can have: one that reached it holds every commit acknowledged before. */
  flushed: `select (pg_current_wal_flush_lsn() - '0/0')::text as position`,
  /** Null on a server that is not in recovery: a primary is not accepted as a replica. */
  replayed: `select (pg_last_wal_replay_lsn() - '0/0')::text as position`,
};

async function position(em: EntityManager, sql: string): Promise<bigint | null> {
  const [row] = await em.execute<{ position: string | null }[]>(sql);
  return row?.position ? BigInt(row.position) : null;
}

/** The primary's WAL position now: after a batch's COMMIT, a position at or after that commit (one statement per batch). */
export async function currentPosition(em: EntityManager): Promise<bigint> {
  const current = await position(em, POSITION_SQL.afterCommit);
  if (current === null) throw new Error('pg_current_wal_lsn() answered nothing');
  return current;
}

function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export interface ReplicaOptions {
  maxLagMs: number;
  /** Logs one line when a replica becomes unusable and one when it serves again. */
  health: DependencyHealth;
}

interface Replica {
  /** host:port/database, for logs (no credentials). */
  name: string;
  orm: Orm;
  /** Replayed position at the last successful poll; null before the first one and after a failure. */
  replayed: bigint | null;
  /** The time of the newest primary sample `replayed` has reached: the replica holds every commit acknowledged before it. */
  freshAt: number;
  polling: boolean;
}

interface Sample {
  at: number;
  position: bigint;
}

export class ReadReplicas {
  private readonly primary: Orm;
  private readonly replicas: Replica[];
  private readonly maxLagMs: number;
  private readonly health: DependencyHealth;
  /** The primary's recent positions, oldest first, kept as long as the lag bound looks back. */
  private samples: Sample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> = Promise.resolve();
  private closed = false;
  /** Round robin over the replicas that qualify. */
  private turn = 0;

  private constructor(primary: Orm, replicas: Replica[], options: ReplicaOptions) {
    this.primary = primary;
    this.replicas = replicas;
    this.maxLagMs = options.maxLagMs;
    this.health = options.health;
  }

  /** Connects to each replica (one that is down is skipped until it answers) and polls them until close(). */
  static async open(primary: Orm, urls: string[], options: ReplicaOptions): Promise<ReadReplicas> {
    const replicas = await Promise.all(
      urls.map(async (url): Promise<Replica> => {
        const { hostname, port, pathname } = new URL(url);
        const orm = await openOrm(url, { timeouts: REPLICA_TIMEOUTS });
        return { name: `${hostname}:${port || 5432}${pathname}`, orm, replayed: null, freshAt: 0, polling: false };
      }),
    );
    const set = new ReadReplicas(primary, replicas, options);
    if (replicas.length > 0) {
      // The first round before serving, so reads use replicas from the start.
      await set.poll();
      set.scheduleNext();
    }
    return set;
  }

  /** Whether reads can go anywhere but the primary (no replicas configured: callers skip looking up positions). */
  get enabled(): boolean {
    return this.replicas.length > 0;
  }

  /**
   * Runs `work` on a replica that has replayed past `required` and lags
   * less than the bound, or on the primary when none does. Any failure on
   * the replica but a refusal (ApiError) runs `work` again on the primary
   * (reads change nothing); a lost or timed-out connection also sidelines
   * the replica until its next good poll, while a query cancelled by replay
   * (a recovery conflict) does not.
   */
  async read<T>(required: bigint, primary: () => EntityManager, work: (em: EntityManager) => Promise<T>): Promise<T> {
    const replica = this.choose(required);
    if (!replica) return work(primary());
    try {
      return await work(replica.orm.em.fork());
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (outageOf(error) === 'postgres' || QUERY_TIMEOUT.test((error as Error).message)) this.failed(replica, error as Error);
      return work(primary());
    }
  }

  private choose(required: bigint): Replica | null {
    const now = Date.now();
    const fit = this.replicas.filter((r) => r.replayed !== null && r.replayed >= required && now - r.freshAt <= this.maxLagMs);
    if (fit.length === 0) return null;
    this.turn = (this.turn + 1) % fit.length;
    return fit[this.turn] ?? null;
  }

  private failed(replica: Replica, error: Error): void {
    replica.replayed = null;
    if (this.closed) return;
    this.health.reportDown(`replica ${replica.name}`, 'reads', error);
  }

  /** One round: the primary first, so a replica that has replayed everything counts as fresh as of now. */
  private async poll(): Promise<void> {
    try {
      const at = Date.now();
      const current = await within(position(this.primary.em.fork(), POSITION_SQL.flushed), POLL_TIMEOUT_MS);
      if (current !== null) this.samples.push({ at, position: current });
    } catch {
      // The primary's own outage is reported by its users; replicas then only age out against the last samples.
    }
    const horizon = Date.now() - this.maxLagMs - POLL_TIMEOUT_MS;
    while (this.samples.length > 1 && (this.samples[0] as Sample).at < horizon) this.samples.shift();
    await Promise.all(this.replicas.map((replica) => this.pollReplica(replica)));
  }

  private async pollReplica(replica: Replica): Promise<void> {
    // A poll still hanging from before: the replica stays as marked (a timed-out poll marked it failed).
    if (replica.polling) return;
    replica.polling = true;
    const work = position(replica.orm.em.fork(), POSITION_SQL.replayed).finally(() => (replica.polling = false));
    try {
      const replayed = await within(work, POLL_TIMEOUT_MS);
      if (replayed === null) throw new Error('not a streaming replica (pg_last_wal_replay_lsn() is null)');
      replica.replayed = replayed;
      for (const sample of this.samples) if (sample.position <= replayed && sample.at > replica.freshAt) replica.freshAt = sample.at;
      this.health.reportUp(`replica ${replica.name}`, 'reads');
    } catch (error) {
      this.failed(replica, error as Error);
    }
  }

  /** The next round POLL_INTERVAL_MS after this one ends: rounds never overlap. */
  private scheduleNext(): void {
    this.timer = setTimeout(() => {
      this.round = this.poll().finally(() => {
        if (!this.closed) this.scheduleNext();
      });
    }, POLL_INTERVAL_MS);
    // Never what keeps a process alive: close() ends it on shutdown.
    this.timer.unref();
  }

  /** Stops polling (after the round under way, bounded by the poll timeout) and closes the replica connections. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.round;
    await Promise.all(this.replicas.map((r) => r.orm.close()));
  }
}
