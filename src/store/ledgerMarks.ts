import type { ChainableCommander } from 'ioredis';
import type { LedgerEvent } from '../entities/ledgerEvent.ts';
import { randomBytesPooled } from '../ids.ts';
import { encodeAnnouncement } from '../ledger/announcement.ts';
import type { MarksState, PublicationMarks } from '../ledger/publisher.ts';
import type { RedisKeys, RedisClient } from '../redis.ts';

/**
 * Raises the head only (two publishers may report out of order) and announces
 * each raise to the API instances' event streams (ARGV[3] is a channel, not a
 * key: pub/sub reaches every node of a cluster; ARGV[4] the announcement,
 * src/ledger/announcement.ts); then clears the dirty mark if it is still the
 * one seen. An announcement is at most once: streams also check the head in
 * Postgres periodically (src/ledger/fanout.ts). Returns the marks as they
 * stand after it: the publisher's next round starts from them.
 */
const publishedScript = `
local head = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > head then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('PUBLISH', ARGV[3], ARGV[4])
end
local dirty = redis.call('GET', KEYS[2])
if ARGV[2] ~= '' and dirty == ARGV[2] then
  redis.call('DEL', KEYS[2])
  dirty = false
end
return {dirty, redis.call('GET', KEYS[1])}
`;

/** A mark no earlier writer set: a publisher clears only the one it saw. */
const freshMark = () => randomBytesPooled(9).toString('base64url');

/**
 * What lets an events poll answer 304 without Postgres: the ledger head as
 * last published, and a dirty mark that every writer whose outbox rows could
 * wait sets before its transaction and again after commit (before the
 * reply), so rows may be waiting only while the mark is set. A batch that
 * publishes its own rows in its transaction sets none: none of them ever
 * waits. While the mark is set, reads take the Postgres path (publish
 * pending rows, then look); a publisher that drained the outbox (the
 * background one, or a read) raises the head and clears the mark it saw, so
 * a newer mark survives it. A batch that dies between its commit and its
 * announcement leaves a head above the announced one: the background
 * publisher announces it once overdue (src/ledger/publisher.ts), and a
 * result answered from Postgres instead of its reply marks the outbox first
 * (src/roles/api.ts), so its writer reads its own events meanwhile.
 */
export class LedgerMarks implements PublicationMarks {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;

  constructor(redis: RedisClient, keys: RedisKeys) {
    this.redis = redis;
    this.keys = keys;
    redis.defineCommand('agoraLedgerPublished', { numberOfKeys: 2, lua: publishedScript });
  }

  markDirty(pipeline: ChainableCommander): void {
    pipeline.set(this.keys.outboxDirty, freshMark());
  }

  /** Before a transaction whose outbox rows could wait, so that a crash after its commit still leaves the mark. */
  async markDirtyNow(): Promise<void> {
    await this.redis.set(this.keys.outboxDirty, freshMark());
  }

  async read(): Promise<MarksState> {
    const [dirty, head] = await this.redis.mget(this.keys.outboxDirty, this.keys.ledgerHead);
    return { dirty: dirty ?? null, head: head ?? null };
  }

  /** After a publication commit: the head is at least `head`; `drained` the mark seen before publishing, when nothing was left. */
  async published(head: string, drained: string | null, events: readonly LedgerEvent[] = []): Promise<MarksState> {
    const [dirty, raised] = await (this.redis as unknown as PublishedCommand<Promise<[string | null, string | null]>>).agoraLedgerPublished(
      ...this.publishedArgs(head, drained, events),
    );
    return { dirty, head: raised };
  }

  /**
   * published() as one command of a worker's after-commit pipeline: the announcement of the publication its batch
   * committed. It clears no mark: the batch set none, and one it did not see may belong to rows it did not publish.
   */
  publishedIn(pipeline: ChainableCommander, head: string, events: readonly LedgerEvent[]): void {
    (pipeline as unknown as PublishedCommand<unknown>).agoraLedgerPublished(...this.publishedArgs(head, null, events));
  }

  private publishedArgs(head: string, drained: string | null, events: readonly LedgerEvent[]): PublishedArgs {
    return [
      this.keys.ledgerHead,
      this.keys.outboxDirty,
      head,
      drained ?? '',
      this.keys.ledgerAnnouncements,
      encodeAnnouncement(head, events),
    ];
  }
}

type PublishedArgs = [headKey: string, dirtyKey: string, head: string, mark: string, channel: string, announcement: string];
interface PublishedCommand<R> {
  agoraLedgerPublished(...args: PublishedArgs): R;
}
