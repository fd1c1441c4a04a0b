import type { ChainableCommander } from 'ioredis';
import type { CommandResult } from '../pipeline/command.ts';
import { isCluster, type RedisClient } from '../redis.ts';

/** Retry keys are kept 24 hours (spec Limits). */
export const RETRY_KEY_TTL_SECONDS = 86_400;
/**
 * A claim whose command never reported back (the API died before enqueueing)
 * expires after this long, so the key becomes usable again. Retries do not
 * wait for that: one whose holder is gone re-dispatches the command at once
 * (see http/mutate.ts). Safe because the command id is derived from the key:
 * a command enqueued twice is recognised by processed_command and applied once.
 */
export const PENDING_CLAIM_TTL_SECONDS = 600;

/** How often a key whose release met Redis down is tried again (see IdempotencyStore.release). */
const RELEASE_RETRY_MS = 200;

/** Who holds a pending key: the reply channel of the API instance waiting for it, and since when (ms). */
export interface ClaimHolder {
  replyTo: string;
  claimedAt: number;
}

type Entry =
  | ({ state: 'pending'; fingerprint: string; commandId: string } & Partial<ClaimHolder>)
  | { state: 'done'; fingerprint: string; commandId: string; result: CommandResult };

/** What a key seen before means to a request presenting it again. */
export type Claim =
  | { kind: 'replay'; result: CommandResult }
  | { kind: 'reused' }
  | { kind: 'in_progress'; commandId: string; holder: ClaimHolder | null };

/**
 * The retry-key cache. The HTTP tier claims a key before enqueueing (in the
 * same Redis call that takes its rate-limit token); the worker stores the result after commit, so a client whose first request
 * timed out still gets the eventual result on retry.
 */
export class IdempotencyStore {
  private readonly redis: RedisClient;

  constructor(redis: RedisClient) {
    this.redis = redis;
  }

  /** The entry a new claim writes (see RateLimiter.claimAndTake, which claims and takes a token at once). */
  pendingEntry(fingerprint: string, commandId: string, replyTo: string): string {
    const entry: Entry = { state: 'pending', fingerprint, commandId, replyTo, claimedAt: Date.now() };
    return JSON.stringify(entry);
  }

  /** What an existing entry means to a request that presents the same key with `fingerprint`. */
  interpret(raw: string, fingerprint: string): Claim {
    const existing = JSON.parse(raw) as Entry;
    if (existing.fingerprint !== fingerprint) return { kind: 'reused' };
    if (existing.state === 'done') return { kind: 'replay', result: existing.result };
    const holder =
      existing.replyTo !== undefined && existing.claimedAt !== undefined
        ? { replyTo: existing.replyTo, claimedAt: existing.claimedAt }
        : null;
    return { kind: 'in_progress', commandId: existing.commandId, holder };
  }

  /**
   * A retry takes over a pending key whose holder is gone or stopped waiting;
   * only while the key is still pending (a result stored meanwhile wins).
   */
  async takeOver(cacheKey: string, fingerprint: string, commandId: string, replyTo: string): Promise<void> {
    const entry: Entry = { state: 'pending', fingerprint, commandId, replyTo, claimedAt: Date.now() };
    await this.redis.set(cacheKey, JSON.stringify(entry), 'EX', PENDING_CLAIM_TTL_SECONDS, 'XX');
  }

  /** Whether the API instance behind a reply channel is still listening on it (it dies with its connection). */
  async holderListens(holder: ClaimHolder): Promise<boolean> {
    // A cluster node counts only its own subscribers (messages are broadcast to every node): ask them all.
    const nodes = isCluster(this.redis) ? this.redis.nodes('all') : [this.redis];
    const counts = await Promise.all(nodes.map(async (node) => ((await node.pubsub('NUMSUB', holder.replyTo)) as [string, number])[1]));
    return counts.some((listeners) => Number(listeners) > 0);
  }

  async complete(cacheKey: string, fingerprint: string, commandId: string, result: CommandResult): Promise<void> {
    await this.completeIn(this.redis.pipeline(), cacheKey, fingerprint, commandId, result).exec();
  }

  /** Queues a retry key's final result on `pipeline`, for a caller that sends many writes at once. */
  completeIn(
    pipeline: ChainableCommander,
    cacheKey: string,
    fingerprint: string,
    commandId: string,
    result: CommandResult,
  ): ChainableCommander {
    const entry: Entry = { state: 'done', fingerprint, commandId, result };
    return pipeline.set(cacheKey, JSON.stringify(entry), 'EX', RETRY_KEY_TTL_SECONDS);
  }

  /**
   * Frees a key whose command could not be enqueued. Redis may be what failed (in a failover the API's fail-fast
   * commands hear MOVED for a moment): then the delete is tried again every RELEASE_RETRY_MS until `until` (ms since
   * the epoch), which must come before any retry may take the claim over (http/mutate.ts holderIsGone); freed once
   * Redis answers, a retry is applied at once instead of hearing 409 idempotency_in_progress until then.
   */
  async release(cacheKey: string, until: number): Promise<void> {
    if (!(await this.deleted(cacheKey))) void this.releaseLater(cacheKey, until);
  }

  private async releaseLater(cacheKey: string, until: number): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, RELEASE_RETRY_MS).unref());
      if (Date.now() >= until || (await this.deleted(cacheKey))) return;
    }
  }

  /** Whether Redis deleted the key (false: it could not be reached). */
  private deleted(cacheKey: string): Promise<boolean> {
    return this.redis.del(cacheKey).then(
      () => true,
      () => false,
    );
  }
}
