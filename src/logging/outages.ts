import type { Logger } from './logger.ts';
import type { EventEmitter } from 'node:events';

/**
 * One log line when a dependency goes down and one when it is back, however
 * many connections fail and however often they retry in between. A
 * dependency is down while any of its watched connections is down.
 */
export class DependencyHealth {
  private readonly logger: Logger;
  private readonly down = new Map<string, { since: number; connections: Set<string> }>();
  private readonly probes = new Map<string, NodeJS.Timeout>();

  constructor(logger: Logger) {
    this.logger = logger;
  }

  reportDown(dependency: string, connection: string, error: Error): void {
    const outage = this.down.get(dependency);
    if (outage) {
      outage.connections.add(connection);
      return;
    }
    this.down.set(dependency, { since: Date.now(), connections: new Set([connection]) });
    this.logger.warn(
      { dependency, connection, err: { message: error.message, code: (error as { code?: unknown }).code } },
      `${dependency} unavailable`,
    );
  }

  reportUp(dependency: string, connection: string): void {
    const outage = this.down.get(dependency);
    if (!outage) return;
    outage.connections.delete(connection);
    if (outage.connections.size > 0) return;
    this.down.delete(dependency);
    // Same level as the outage line, so whoever sees one sees the other.
    this.logger.warn({ dependency, downMs: Date.now() - outage.since }, `${dependency} recovered`);
  }

  /**
   * For a dependency reached through a pool (Postgres): after a failure, poll
   * `probe` until it answers, then report recovery.
   */
  reportFailure(dependency: string, error: Error, probe: () => Promise<unknown>, intervalMs = 500): void {
    this.reportDown(dependency, 'pool', error);
    if (this.probes.has(dependency)) return;
    const tick = () => {
      probe().then(
        () => {
          this.probes.delete(dependency);
          this.reportUp(dependency, 'pool');
        },
        () => this.probes.set(dependency, setTimeout(tick, intervalMs).unref()),
      );
    };
    this.probes.set(dependency, setTimeout(tick, intervalMs).unref());
  }

  /** Handles a Redis connection's errors (so none is "unhandled") and follows its state. */
  watchRedis(connection: Pick<EventEmitter, 'on'>, name: string): void {
    connection.on('error', (error: Error) => this.reportDown('redis', name, error));
    connection.on('ready', () => this.reportUp('redis', name));
    connection.on('end', () => this.reportUp('redis', name));
  }

  close(): void {
    for (const timer of this.probes.values()) clearTimeout(timer);
    this.probes.clear();
  }
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** Postgres SQLSTATEs of a server that is going away, starting up, or unreachable. */
const POSTGRES_OUTAGE_CODES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300']);
const POSTGRES_OUTAGE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|terminating connection|the database system is|Client has encountered a connection error/i;
// The cluster ones: a failover in progress (the cluster is down, or its slots are moving). A MOVED or ASK
// reaches us when ioredis does not follow it itself (a command of an auto-pipeline whose slot moved meanwhile).
const REDIS_OUTAGE_MESSAGE = new RegExp(
  [
    "Connection is closed|Stream isn't writeable|enableOfflineQueue|max retries per request|Reached the max retries",
    'CLUSTERDOWN|TRYAGAIN|Too many Cluster redirections|Failed to refresh slots cache|None of startup nodes is available',
    "Cluster isn't ready|^(MOVED|ASK) \\d+ \\S+:\\d+$",
  ].join('|'),
  'i',
);

export type Dependency = 'postgres' | 'redis';

function codeOf(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** A failure to reach a dependency (as opposed to a bug or a refused statement). */
export function isConnectionError(error: unknown): boolean {
  return outageOf(error) !== null;
}

/**
 * Which dependency an error says is unreachable, or null for any other
 * error. Postgres errors come wrapped by MikroORM (DriverException) or
 * straight from the pg pool; everything else that names a lost connection is Redis.
 */
export function outageOf(error: unknown): Dependency | null {
  if (!(error instanceof Error)) return null;
  const code = codeOf(error);
  const fromDatabase = error.name.endsWith('Exception') || /postgres|pg-pool/i.test(error.stack ?? '');
  if ((code && POSTGRES_OUTAGE_CODES.has(code)) || POSTGRES_OUTAGE_MESSAGE.test(error.message)) return 'postgres';
  if (code && CONNECTION_CODES.has(code)) return fromDatabase ? 'postgres' : 'redis';
  if (REDIS_OUTAGE_MESSAGE.test(error.message)) return 'redis';
  return null;
}

/**
 * The last line of defence, for a role's process: an engine error that
 * escaped every handler (a client library's rejection nobody awaited, an
 * error event emitted during a failover's redirection storm) is logged and
 * survived, since the connection it came from recovers by itself. Any other
 * escaped error is a bug: the process dies of it, and its supervisor restarts it.
 */
export function surviveEscapedOutages(logger: Logger): void {
  const handle = (origin: string) => (error: unknown) => {
    if (isConnectionError(error)) {
      logger.warn({ origin, err: error }, 'an engine error escaped its handler; carrying on');
      return;
    }
    logger.fatal({ origin, err: error }, 'unhandled error; exiting');
    process.exit(1);
  };
  process.on('uncaughtException', handle('uncaughtException'));
  process.on('unhandledRejection', handle('unhandledRejection'));
}
