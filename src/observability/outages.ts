import type { Redis } from 'ioredis';
import type { Logger } from './logger.ts';

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

  isDown(dependency: string): boolean {
    return this.down.has(dependency);
  }

  reportDown(dependency: string, connection: string, error: Error): void {
    const outage = this.down.get(dependency);
    if (outage) {
      outage.connections.add(connection);
      return;
    }
    this.down.set(dependency, { since: Date.now(), connections: new Set([connection]) });
    this.logger.warn({ dependency, connection, err: { message: error.message, code: (error as { code?: unknown }).code } }, `${dependency} unavailable`);
  }

  reportUp(dependency: string, connection: string): void {
    const outage = this.down.get(dependency);
    if (!outage) return;
    outage.connections.delete(connection);
    if (outage.connections.size > 0) return;
    this.down.delete(dependency);
    this.logger.info({ dependency, downMs: Date.now() - outage.since }, `${dependency} recovered`);
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
  watchRedis(connection: Redis, name: string): void {
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

/** A failure to reach a dependency (as opposed to a bug or a refused statement). */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  return /Connection is closed|Stream isn't writeable|connect ECONNREFUSED|read ECONNRESET|write EPIPE/i.test(error.message);
}
