import { AccessToken } from '../entities/accessToken.ts';
import type { Runtime } from '../context.ts';
import type { SseRegistry } from './sse.ts';

/** How often the tokens of open streams are checked in Postgres, in case a revocation's announcement was lost. */
const TOKEN_RECHECK_MS = 5000;

/**
 * Ends the streams whose token is no longer live: at once for the tokens a
 * worker announces (revoked, or their agent's key rotated: only the revoked
 * ones end), and every TOKEN_RECHECK_MS for all of them, in case an
 * announcement was lost to a Redis reconnection.
 */
export class RevocationWatch {
  private readonly ctx: Runtime;
  private readonly registry: SseRegistry;
  private readonly timer: NodeJS.Timeout;

  constructor(ctx: Runtime, registry: SseRegistry) {
    this.ctx = ctx;
    this.registry = registry;
    this.timer = setInterval(() => this.check(registry.tokenHashes()), TOKEN_RECHECK_MS);
    this.timer.unref();
  }

  check(announced: string[]): void {
    const open = new Set(this.registry.tokenHashes());
    const candidates = announced.filter((hash) => open.has(hash));
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
