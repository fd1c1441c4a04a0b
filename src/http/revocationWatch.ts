import type { Runtime } from '../context.ts';
import { AccessToken } from '../entities/accessToken.ts';
import type { SseRegistry } from './sse.ts';

/** How often the tokens of open streams are checked in Postgres, in case a revocation's announcement was lost. */
const TOKEN_RECHECK_MS = 5000;
/**
 * How long an announced token is remembered: longer than a stream takes from authenticating
 * (its credential read just before the revocation) to joining the registry.
 */
const SETUP_WINDOW_MS = 10_000;

/**
 * Ends the streams whose token is no longer live: at once for the tokens a
 * worker announces (revoked, or their agent's key rotated: only the revoked
 * ones end), including a stream that joins within SETUP_WINDOW_MS of its
 * token's announcement (it authenticated before the revocation and was still
 * being set up when the announcement came), and every TOKEN_RECHECK_MS for
 * all of them, and whenever the subscription comes back, in case an
 * announcement was lost to a Redis reconnection.
 */
export class RevocationWatch {
  private readonly ctx: Pick<Runtime, 'orm' | 'logger'>;
  private readonly registry: SseRegistry;
  private readonly timer: NodeJS.Timeout;
  /** Token hashes announced within SETUP_WINDOW_MS, with when, oldest first. */
  private readonly recent = new Map<string, number>();

  constructor(ctx: Pick<Runtime, 'orm' | 'logger'>, registry: SseRegistry) {
    this.ctx = ctx;
    this.registry = registry;
    this.timer = setInterval(() => this.recheck(), TOKEN_RECHECK_MS);
    this.timer.unref();
    registry.watchTokens((hash) => {
      if (this.recent.has(hash)) this.check([hash]);
    });
  }

  /** Credentials a worker changed: the streams of those that are no longer live end. */
  announced(hashes: string[]): void {
    const now = Date.now();
    for (const hash of hashes) {
      // Deleted first, so the map stays in order of announcement.
      this.recent.delete(hash);
      this.recent.set(hash, now);
    }
    for (const [hash, at] of this.recent) {
      if (now - at < SETUP_WINDOW_MS) break;
      this.recent.delete(hash);
    }
    this.check(hashes);
  }

  /** Checks every open stream's token. */
  recheck(): void {
    this.check(this.registry.tokenHashes());
  }

  private check(hashes: string[]): void {
    const open = new Set(this.registry.tokenHashes());
    const candidates = hashes.filter((hash) => open.has(hash));
    if (candidates.length === 0) return;
    this.ctx.orm.em
      .fork()
      .find(AccessToken, { tokenHash: { $in: candidates }, revokedAt: null }, { fields: ['tokenHash'] })
      .then((live) => {
        const stillLive = new Set(live.map((token) => token.tokenHash));
        this.registry.revoke(candidates.filter((hash) => !stillLive.has(hash)));
      })
      // Postgres away: the next check (or the next announcement) tries again.
      .catch((error: unknown) => this.ctx.logger.warn({ err: error }, 'could not check the tokens of open event streams'));
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
