import { randomUUID } from 'node:crypto';
import type { RedisClient, RedisKeys } from '../redis.ts';

/** How long a slot counts without its instance renewing it: a dead instance's streams stop counting after this. */
const SLOT_TTL_MS = 6000;
/** How often an instance renews the slots of its open streams (three times per TTL: one lost renewal costs nothing). */
const RENEW_EVERY_MS = SLOT_TTL_MS / 3;

/** Milliseconds on the Redis clock: one clock for every API instance. */
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** KEYS[1] the owner's slots; ARGV: limit, ttl, member. Drops expired slots, then takes one if the owner holds fewer than the limit. */
const takeScript = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[2]))
return 1`;

/** KEYS[1] the owner's slots; ARGV: ttl, then the members this instance still holds. */
const renewScript = `${NOW}
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[1]))
return 1`;

interface RedisWithSlots {
  agoraTakeStreamSlot(key: string, limit: number, ttlMs: number, member: string): Promise<number>;
  agoraRenewStreamSlots(key: string, ttlMs: number, ...members: string[]): Promise<number>;
}

/** A slot this instance holds: released when its stream closes. */
export interface StreamSlot {
  key: string;
  member: string;
}

/**
 * Event-stream slots per owner (an agent, or a source address without a
 * token), counted across every API instance: a sorted set per owner in
 * Redis whose members expire unless the instance holding them renews them.
 * An instance that dies stops renewing, so its streams stop counting within
 * SLOT_TTL_MS; one that closes a stream removes its slot at once.
 */
export class StreamSlots {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly perOwner: number;
  private readonly held = new Map<string, Set<string>>();
  private readonly renewal: NodeJS.Timeout;
  private readonly onError: (error: unknown) => void;

  constructor(redis: RedisClient, keys: RedisKeys, perOwner: number, onError: (error: unknown) => void) {
    this.redis = redis;
    this.keys = keys;
    this.perOwner = perOwner;
    this.onError = onError;
    redis.defineCommand('agoraTakeStreamSlot', { numberOfKeys: 1, lua: takeScript });
    redis.defineCommand('agoraRenewStreamSlots', { numberOfKeys: 1, lua: renewScript });
    this.renewal = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.renewal.unref();
  }

  /**
   * A slot for `owner`, or null when it holds as many streams as it may on
   * all instances together. A stream is a read, and reads outlive a Redis
   * outage: without Redis the limit is counted on this instance alone, and
   * the next renewal once Redis is back counts the slot everywhere again.
   */
  async take(owner: string): Promise<StreamSlot | null> {
    const slot = { key: this.keys.streamSlots(owner), member: randomUUID() };
    const taken = await (this.redis as unknown as RedisWithSlots)
      .agoraTakeStreamSlot(slot.key, this.perOwner, SLOT_TTL_MS, slot.member)
      .catch((error: unknown) => {
        this.onError(error);
        return (this.held.get(slot.key)?.size ?? 0) < this.perOwner ? 1 : 0;
      });
    if (taken !== 1) return null;
    const members = this.held.get(slot.key) ?? new Set<string>();
    this.held.set(slot.key, members.add(slot.member));
    return slot;
  }

  /** Gives the slot back; if Redis cannot be reached now, the slot expires by itself. */
  release(slot: StreamSlot): void {
    const members = this.held.get(slot.key);
    members?.delete(slot.member);
    if (members?.size === 0) this.held.delete(slot.key);
    this.redis.zrem(slot.key, slot.member).catch(this.onError);
  }

  /** Stops renewing (the process is stopping: its slots expire, or were released as their streams ended). */
  stop(): void {
    clearInterval(this.renewal);
  }

  private async renew(): Promise<void> {
    const redis = this.redis as unknown as RedisWithSlots;
    await Promise.all(
      [...this.held].map(([key, members]) => redis.agoraRenewStreamSlots(key, SLOT_TTL_MS, ...members).catch(this.onError)),
    );
  }
}
