import { Agora } from '../client.ts';
import { Actors, type Sent } from './actions.ts';
import { picker, type LoadPlan, type Operation } from './plan.ts';
import { Recorder, summarize, type LatencySummary, type Second } from './recorder.ts';
import type { LoadWorld } from './world.ts';

/**
 * The open-model run: arrival i is due at start + i / rate and starts then,
 * whatever the earlier ones are doing; its response time counts from that
 * due time. Stream subscribers stay open throughout and count what they
 * receive. Every write's retry key is logged with its outcome.
 */
export interface WriteRecord {
  op: Operation;
  retryKey: string;
  status: number;
}

export interface LoadResult {
  plan: LoadPlan;
  startedAt: string;
  elapsedSeconds: number;
  totals: { arrivals: number; ok: number; rateLimited: number; errors: number; dropped: number; paced: number };
  statuses: Record<string, number>;
  responseTime: LatencySummary;
  serviceTime: LatencySummary;
  operations: Record<string, LatencySummary & { ok: number; rateLimited: number; errors: number }>;
  streams: { subscribers: number; eventsReceived: number; failed: number };
  timeline: Second[];
}

/** Throws unless `target` answers its discovery document as Agora does. */
export async function assertAgora(target: string): Promise<void> {
  const refuse = (why: string) => new Error(`${target} does not answer as Agora (${why}); agora load refuses to run against it`);
  const response = await fetch(`${target}/api/forum`).catch((error: Error) => Promise.reject(refuse(error.message)));
  const body = (await response.json().catch(() => null)) as {
    name?: unknown;
    apiVersion?: unknown;
    endpoints?: { posts?: unknown; events?: unknown };
  } | null;
  if (
    response.status !== 200 ||
    body?.name !== 'Agora' ||
    typeof body.apiVersion !== 'string' ||
    typeof body.endpoints?.events !== 'string'
  )
    throw refuse(`GET /api/forum answered ${response.status}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runLoad(
  plan: LoadPlan,
  world: LoadWorld,
  progress: (second: Second, inFlight: number) => void = () => {},
): Promise<{ result: LoadResult; writes: WriteRecord[] }> {
  const recorder = new Recorder();
  const actors = new Actors(world, plan.hot);
  const pick = picker(plan.mix);
  const writes: WriteRecord[] = [];
  const statuses: Record<string, number> = {};
  const stop = new AbortController();
  let eventsReceived = 0;
  let streamFailures = 0;
  const subscribers = Array.from({ length: plan.streams }, async (_, i) => {
    const agora = new Agora({ baseUrl: plan.target, token: world.agents[i % world.agents.length]!.token });
    for await (const _event of agora.events({ since: 'now' }, { signal: stop.signal })) eventsReceived++;
  }).map((subscriber) => subscriber.catch(() => void streamFailures++));

  let paced = 0;
  let inFlight = 0;
  const pending = new Set<Promise<void>>();
  const arrive = (due: number) => {
    const op = pick();
    if (inFlight >= plan.maxInFlight) return recorder.record(op, 'dropped', 0, 0);
    inFlight++;
    const done = actors
      .act(op)
      .then((sent: Sent | null) => {
        if (!sent) return void paced++;
        const end = performance.now();
        statuses[sent.status] = (statuses[sent.status] ?? 0) + 1;
        recorder.record(
          sent.op,
          sent.status < 400 ? 'ok' : sent.status === 429 ? 'rateLimited' : 'error',
          (end - due) * 1000,
          (end - sent.sentAt) * 1000,
        );
        if (sent.retryKey) writes.push({ op: sent.op, retryKey: sent.retryKey, status: sent.status });
      })
      .catch(() => {
        statuses.network = (statuses.network ?? 0) + 1;
        recorder.record(op, 'error', (performance.now() - due) * 1000, 0);
      })
      .finally(() => {
        inFlight--;
        pending.delete(done);
      });
    pending.add(done);
  };

  const startedAt = new Date().toISOString();
  const start = performance.now();
  const arrivals = Math.round(plan.rate * plan.durationSeconds);
  let issued = 0;
  let second = 1;
  while (issued < arrivals) {
    const now = performance.now();
    const due = Math.min(arrivals, Math.floor(((now - start) * plan.rate) / 1000) + 1);
    for (; issued < due; issued++) arrive(start + (issued * 1000) / plan.rate);
    if (now - start >= second * 1000) progress(recorder.closeSecond(second++), inFlight);
    await sleep(Math.max(1, Math.min(10, start + (issued * 1000) / plan.rate - performance.now())));
  }
  while (pending.size > 0) {
    await Promise.race([...pending, sleep(Math.max(1, start + second * 1000 - performance.now()))]);
    if (performance.now() - start >= second * 1000) progress(recorder.closeSecond(second++), inFlight);
  }
  progress(recorder.closeSecond(second), 0);
  stop.abort();
  await Promise.all(subscribers);

  const operations = Object.fromEntries(
    [...recorder.byOperation]
      .filter(([, per]) => per.histogram.totalCount > 0)
      .map(([op, per]) => [
        op,
        { ...summarize(per.histogram), ok: per.counts.ok, rateLimited: per.counts.rateLimited, errors: per.counts.error },
      ]),
  );
  const { ok, rateLimited, error: errors, dropped } = recorder.totals;
  const result: LoadResult = {
    plan: { ...plan },
    startedAt,
    elapsedSeconds: (performance.now() - start) / 1000,
    totals: { arrivals, ok, rateLimited, errors, dropped, paced },
    statuses,
    responseTime: summarize(recorder.responseTime),
    serviceTime: summarize(recorder.serviceTime),
    operations,
    streams: { subscribers: plan.streams, eventsReceived, failed: streamFailures },
    timeline: recorder.timeline,
  };
  return { result, writes };
}
