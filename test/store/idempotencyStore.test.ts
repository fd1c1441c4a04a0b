import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { redisReady } from '../../src/redis.ts';
import { IdempotencyStore, PENDING_CLAIM_TTL_SECONDS, RETRY_KEY_TTL_SECONDS } from '../../src/store/idempotencyStore.ts';
import { RedisCluster } from '../support/redisCluster.ts';
import { TcpProxy, targetOf } from '../support/tcpProxy.ts';
import { until } from '../support/until.ts';

/**
 * The retry-key store against a real Redis (the suite's, keys under a prefix
 * of this file's own), and its cluster branch against a real Redis Cluster.
 * Only Date is faked: the claim times are then exact, and ioredis keeps its timers.
 */
const redis = new Redis(inject('redisUrl'), { lazyConnect: true });
const store = new IdempotencyStore(redis);
const prefix = `idem-test-${randomUUID()}`;
const key = (name: string) => `${prefix}:${name}`;
const ttlOf = (name: string) => redis.ttl(key(name));

beforeAll(async () => {
  await redis.connect();
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const result = { status: 201, body: { project: { slug: 'garden' } } };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-09-11T12:00:00.000Z'));
});
afterEach(() => {
  vi.useRealTimers();
});

describe('retry-key entries', () => {
  it('writes a pending claim naming the reply channel and the time of the claim', () => {
    expect(JSON.parse(store.pendingEntry('fp1', 'cmd1', 'replies:api-1'))).toEqual({
      state: 'pending',
      fingerprint: 'fp1',
      commandId: 'cmd1',
      replyTo: 'replies:api-1',
      claimedAt: Date.parse('2026-09-11T12:00:00.000Z'),
    });
  });

  it('reads a pending claim presented with the same parameters as in progress, with its holder', () => {
    const raw = store.pendingEntry('fp1', 'cmd1', 'replies:api-1');
    expect(store.interpret(raw, 'fp1')).toEqual({
      kind: 'in_progress',
      commandId: 'cmd1',
      holder: { replyTo: 'replies:api-1', claimedAt: Date.parse('2026-09-11T12:00:00.000Z') },
    });
  });

  it('reads a pending claim that names no holder as in progress without one', () => {
    expect(store.interpret(JSON.stringify({ state: 'pending', fingerprint: 'fp1', commandId: 'cmd1' }), 'fp1')).toEqual({
      kind: 'in_progress',
      commandId: 'cmd1',
      holder: null,
    });
    expect(store.interpret(JSON.stringify({ state: 'pending', fingerprint: 'fp1', commandId: 'cmd1', replyTo: 'r' }), 'fp1')).toMatchObject(
      { holder: null },
    );
    expect(store.interpret(JSON.stringify({ state: 'pending', fingerprint: 'fp1', commandId: 'cmd1', claimedAt: 1 }), 'fp1')).toMatchObject(
      { holder: null },
    );
  });

  it('replays the stored result of a finished command presented with the same parameters', () => {
    const raw = JSON.stringify({ state: 'done', fingerprint: 'fp1', commandId: 'cmd1', result });
    expect(store.interpret(raw, 'fp1')).toEqual({ kind: 'replay', result });
  });

  it('reads a key presented with other parameters as reused, finished or not', () => {
    expect(store.interpret(JSON.stringify({ state: 'done', fingerprint: 'fp1', commandId: 'cmd1', result }), 'fp2')).toEqual({
      kind: 'reused',
    });
    expect(store.interpret(store.pendingEntry('fp1', 'cmd1', 'r'), 'fp2')).toEqual({ kind: 'reused' });
  });
});

describe('retry-key store', () => {
  it('keeps a finished command’s result for 24 hours', async () => {
    await store.complete(key('done'), 'fp1', 'cmd1', result);
    expect(JSON.parse((await redis.get(key('done'))) ?? 'null')).toEqual({ state: 'done', fingerprint: 'fp1', commandId: 'cmd1', result });
    expect(await ttlOf('done')).toBe(RETRY_KEY_TTL_SECONDS);
    expect(RETRY_KEY_TTL_SECONDS).toBe(86_400);
  });

  it('queues a result on a caller’s pipeline without sending it', async () => {
    const pipeline = redis.pipeline();
    store.completeIn(pipeline, key('queued'), 'fp1', 'cmd1', result);
    expect(await redis.exists(key('queued'))).toBe(0);
    await pipeline.exec();
    expect(store.interpret((await redis.get(key('queued'))) ?? '', 'fp1')).toEqual({ kind: 'replay', result });
    expect(await ttlOf('queued')).toBe(RETRY_KEY_TTL_SECONDS);
  });

  it('lets a retry take over a pending key with its own reply channel, for ten minutes', async () => {
    await redis.set(key('taken'), store.pendingEntry('fp1', 'cmd1', 'replies:dead'), 'EX', 30);
    await store.takeOver(key('taken'), 'fp1', 'cmd1', 'replies:api-2');
    expect(store.interpret((await redis.get(key('taken'))) ?? '', 'fp1')).toEqual({
      kind: 'in_progress',
      commandId: 'cmd1',
      holder: { replyTo: 'replies:api-2', claimedAt: Date.parse('2026-09-11T12:00:00.000Z') },
    });
    expect(await ttlOf('taken')).toBe(PENDING_CLAIM_TTL_SECONDS);
    expect(PENDING_CLAIM_TTL_SECONDS).toBe(600);
  });

  it('does not recreate a key that is gone by the time of the takeover', async () => {
    await store.takeOver(key('gone'), 'fp1', 'cmd1', 'replies:api-2');
    expect(await redis.exists(key('gone'))).toBe(0);
  });

  it('frees a key whose command could not be enqueued', async () => {
    await redis.set(key('freed'), store.pendingEntry('fp1', 'cmd1', 'r'));
    await store.release(key('freed'), Date.now() + 5000);
    expect(await redis.exists(key('freed'))).toBe(0);
  });

  it('deletes nothing more once a release succeeded: a claim a retry makes right after it stays', async () => {
    await redis.set(key('reclaimed'), store.pendingEntry('fp1', 'cmd1', 'r'));
    await store.release(key('reclaimed'), Date.now() + 5000);
    await redis.set(key('reclaimed'), store.pendingEntry('fp1', 'cmd1', 'r2'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await redis.exists(key('reclaimed'))).toBe(1);
  });

  it('knows a holder listens while its reply channel has a subscriber', async () => {
    const channel = key('replies:listening');
    const subscriber = redis.duplicate();
    try {
      await subscriber.subscribe(channel);
      expect(await store.holderListens({ replyTo: channel, claimedAt: 0 })).toBe(true);
    } finally {
      subscriber.disconnect();
    }
  });

  it('knows a holder is gone once its reply channel has no subscriber', async () => {
    expect(await store.holderListens({ replyTo: key('replies:nobody'), claimedAt: 0 })).toBe(false);
  });
});

describe('retry-key store on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await RedisCluster.start();
    client = new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })));
    // Ready: it has read the cluster's layout and knows every node.
    await redisReady(client);
  }, 120_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('finds the holder of a reply channel whichever master its subscription landed on', async () => {
    // A node counts only its own subscribers (a cluster client subscribes on a master): one listener on each master, each on a channel of its own.
    const masters = client.nodes('master').map((master) => new Redis(Number(master.options.port), '127.0.0.1'));
    try {
      expect(masters).toHaveLength(3);
      const channels = masters.map((_, i) => `replies:master-${i}`);
      await Promise.all(masters.map((master, i) => master.subscribe(channels[i] as string)));
      const clustered = new IdempotencyStore(client);
      expect(await Promise.all(channels.map((replyTo) => clustered.holderListens({ replyTo, claimedAt: 0 })))).toEqual(
        channels.map(() => true),
      );
      expect(await clustered.holderListens({ replyTo: 'replies:nobody', claimedAt: 0 })).toBe(false);
    } finally {
      for (const master of masters) master.disconnect();
    }
  });
});

describe('a release that meets Redis unreachable', () => {
  // The store on a fail-fast connection (as the API's) through a proxy the test closes: Redis gone as the API sees it.
  const proxy = new TcpProxy(targetOf(inject('redisUrl'), 6379));
  let cut: Redis;
  let cutStore: IdempotencyStore;
  beforeAll(async () => {
    await proxy.open();
    cut = new Redis(proxy.url(inject('redisUrl')), { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    cut.on('error', () => {}); // the closed proxy refusing reconnections: the outage these tests make
    await cut.connect();
    cutStore = new IdempotencyStore(cut);
  });
  afterAll(async () => {
    cut.disconnect();
    await proxy.close();
  });

  it('frees the key once Redis answers again, before its deadline, without failing the caller', async () => {
    await redis.set(key('later'), store.pendingEntry('fp1', 'cmd1', 'r'));
    await proxy.close();
    await cutStore.release(key('later'), Date.now() + 60_000);
    expect(await redis.exists(key('later'))).toBe(1);
    await proxy.open();
    await until(async () => (await redis.exists(key('later'))) === 0, 10_000, 'the key to be freed');
  });

  it('leaves the key after its deadline, when a retry may take the claim over instead', async () => {
    await until(async () => cut.status === 'ready', 10_000, 'the connection to be back');
    await redis.set(key('kept'), store.pendingEntry('fp1', 'cmd1', 'r'));
    await proxy.close();
    const deadline = Date.now() + 1000;
    await cutStore.release(key('kept'), deadline);
    // Exactly at its deadline: a retry may take the claim over from one second after it (http/mutate.ts).
    vi.setSystemTime(deadline);
    await proxy.open();
    await until(async () => cut.status === 'ready', 10_000, 'the connection to be back');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await redis.exists(key('kept'))).toBe(1);
  });
});
