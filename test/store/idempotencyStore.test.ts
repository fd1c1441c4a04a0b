import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdempotencyStore, PENDING_CLAIM_TTL_SECONDS, RETRY_KEY_TTL_SECONDS } from '../../src/store/idempotencyStore.ts';

/** Just enough of Redis for the store: SET with EX and XX, GET, DEL, a pipeline, and PUBSUB NUMSUB. */
function memoryRedis(listeners: Record<string, number> = {}) {
  const values = new Map<string, string>();
  const ttls = new Map<string, number>();
  const set = (key: string, value: string, ...options: (string | number)[]) => {
    if (options.includes('XX') && !values.has(key)) return null;
    values.set(key, value);
    const ex = options.indexOf('EX');
    if (ex >= 0) ttls.set(key, Number(options[ex + 1]));
    return 'OK';
  };
  const redis = {
    async set(key: string, value: string, ...options: (string | number)[]) {
      return set(key, value, ...options);
    },
    async get(key: string) {
      return values.get(key) ?? null;
    },
    async del(key: string) {
      ttls.delete(key);
      return values.delete(key) ? 1 : 0;
    },
    pipeline() {
      const queued: (() => unknown)[] = [];
      const pipeline = {
        set(key: string, value: string, ...options: (string | number)[]) {
          queued.push(() => set(key, value, ...options));
          return pipeline;
        },
        async exec() {
          return queued.map((run) => [null, run()]);
        },
      };
      return pipeline;
    },
    async pubsub(subcommand: string, channel: string) {
      if (subcommand !== 'NUMSUB') throw new Error(`unexpected PUBSUB ${subcommand}`);
      return [channel, listeners[channel] ?? 0];
    },
  };
  return { store: new IdempotencyStore(redis as unknown as Redis), redis, values, ttls };
}

const result = { status: 201, body: { project: { slug: 'garden' } } };

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date('2026-09-11T12:00:00.000Z'));
});
afterEach(() => {
  vi.useRealTimers();
});

describe('retry-key entries', () => {
  it('writes a pending claim naming the reply channel and the time of the claim', () => {
    const { store } = memoryRedis();
    expect(JSON.parse(store.pendingEntry('fp1', 'cmd1', 'replies:api-1'))).toEqual({
      state: 'pending',
      fingerprint: 'fp1',
      commandId: 'cmd1',
      replyTo: 'replies:api-1',
      claimedAt: Date.parse('2026-09-11T12:00:00.000Z'),
    });
  });

  it('reads a pending claim presented with the same parameters as in progress, with its holder', () => {
    const { store } = memoryRedis();
    const raw = store.pendingEntry('fp1', 'cmd1', 'replies:api-1');
    expect(store.interpret(raw, 'fp1')).toEqual({
      kind: 'in_progress',
      commandId: 'cmd1',
      holder: { replyTo: 'replies:api-1', claimedAt: Date.parse('2026-09-11T12:00:00.000Z') },
    });
  });

  it('reads a pending claim that names no holder as in progress without one', () => {
    const { store } = memoryRedis();
    expect(store.interpret(JSON.stringify({ state: 'pending', fingerprint: 'fp1', commandId: 'cmd1' }), 'fp1')).toEqual({ kind: 'in_progress', commandId: 'cmd1', holder: null });
    expect(store.interpret(JSON.stringify({ state: 'pending', fingerprint: 'fp1', commandId: 'cmd1', replyTo: 'r' }), 'fp1')).toMatchObject({ holder: null });
    expect(store.interpret(JSON.stringify({ state: 'pending', fingerprint: 'fp1', commandId: 'cmd1', claimedAt: 1 }), 'fp1')).toMatchObject({ holder: null });
  });

  it('replays the stored result of a finished command presented with the same parameters', () => {
    const { store } = memoryRedis();
    const raw = JSON.stringify({ state: 'done', fingerprint: 'fp1', commandId: 'cmd1', result });
    expect(store.interpret(raw, 'fp1')).toEqual({ kind: 'replay', result });
  });

  it('reads a key presented with other parameters as reused, finished or not', () => {
    const { store } = memoryRedis();
    expect(store.interpret(JSON.stringify({ state: 'done', fingerprint: 'fp1', commandId: 'cmd1', result }), 'fp2')).toEqual({ kind: 'reused' });
    expect(store.interpret(store.pendingEntry('fp1', 'cmd1', 'r'), 'fp2')).toEqual({ kind: 'reused' });
  });
});

describe('retry-key store', () => {
  it('keeps a finished command’s result for 24 hours', async () => {
    const { store, values, ttls } = memoryRedis();
    await store.complete('idem:k', 'fp1', 'cmd1', result);
    expect(JSON.parse(values.get('idem:k') ?? 'null')).toEqual({ state: 'done', fingerprint: 'fp1', commandId: 'cmd1', result });
    expect(ttls.get('idem:k')).toBe(RETRY_KEY_TTL_SECONDS);
    expect(RETRY_KEY_TTL_SECONDS).toBe(86_400);
  });

  it('queues a result on a caller’s pipeline without sending it', async () => {
    const { store, redis, values } = memoryRedis();
    const pipeline = redis.pipeline();
    store.completeIn(pipeline as never, 'idem:k', 'fp1', 'cmd1', result);
    expect(values.has('idem:k')).toBe(false);
    await pipeline.exec();
    expect(store.interpret(values.get('idem:k') ?? '', 'fp1')).toEqual({ kind: 'replay', result });
  });

  it('lets a retry take over a pending key with its own reply channel, for ten minutes', async () => {
    const { store, values, ttls } = memoryRedis();
    values.set('idem:k', store.pendingEntry('fp1', 'cmd1', 'replies:dead'));
    await store.takeOver('idem:k', 'fp1', 'cmd1', 'replies:api-2');
    expect(store.interpret(values.get('idem:k') ?? '', 'fp1')).toMatchObject({ holder: { replyTo: 'replies:api-2' } });
    expect(ttls.get('idem:k')).toBe(PENDING_CLAIM_TTL_SECONDS);
    expect(PENDING_CLAIM_TTL_SECONDS).toBe(600);
  });

  it('does not recreate a key that is gone by the time of the takeover', async () => {
    const { store, values } = memoryRedis();
    await store.takeOver('idem:k', 'fp1', 'cmd1', 'replies:api-2');
    expect(values.has('idem:k')).toBe(false);
  });

  it('frees a key whose command could not be enqueued', async () => {
    const { store, values } = memoryRedis();
    values.set('idem:k', store.pendingEntry('fp1', 'cmd1', 'r'));
    await store.release('idem:k');
    expect(values.has('idem:k')).toBe(false);
  });

  it('knows a holder listens while its reply channel has a subscriber', async () => {
    const { store } = memoryRedis({ 'replies:api-1': 1 });
    expect(await store.holderListens({ replyTo: 'replies:api-1', claimedAt: 0 })).toBe(true);
  });

  it('knows a holder is gone once its reply channel has no subscriber', async () => {
    const { store } = memoryRedis({ 'replies:api-1': 0 });
    expect(await store.holderListens({ replyTo: 'replies:api-1', claimedAt: 0 })).toBe(false);
  });
});
