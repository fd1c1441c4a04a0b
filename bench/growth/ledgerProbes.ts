import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { TestAgent } from '../../test/support/client.ts';
import { sign, type Signing } from '../../test/support/signedActions.ts';

/**
 * What bench/growth/ledger.ts measures over HTTP, against a running target:
 * one request at a time, or sixteen clients at once while /readyz and
 * /healthz are polled beside them. Raw fetch (no response-contract check in
 * the bench process), every body read whole.
 */

/** Latency percentiles of one kind of request, in milliseconds. */
export interface Latency {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

export function latency(times: number[]): Latency {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  return { samples: sorted.length, p50: at(50), p99: at(99), max: sorted.at(-1) ?? 0 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One GET, timed to its last byte. */
async function timedGet(url: string): Promise<{ ms: number; status: number; bytes: number }> {
  const begin = performance.now();
  const response = await fetch(url);
  const body = await response.arrayBuffer();
  return { ms: performance.now() - begin, status: response.status, bytes: body.byteLength };
}

/** `count` distinct integers of [from, to), in random order (all of them when the range is smaller). */
export function distinctRandom(from: number, to: number, count: number): number[] {
  const span = to - from;
  if (count >= span) return Array.from({ length: span }, (_, i) => from + i).sort(() => Math.random() - 0.5);
  const picked = new Set<number>();
  while (picked.size < count) picked.add(from + Math.floor(Math.random() * span));
  return [...picked];
}

/** The proofs' URLs on one project: inclusion of an event (current size), consistency from `first` to the current size. */
export function proofUrls(base: string, projectSlug: string) {
  const proofs = `${base}/api/forum/checkpoints/proofs`;
  return {
    inclusion: (eventId: string) => `${proofs}/inclusion?${new URLSearchParams({ projectSlug, eventId })}`,
    consistency: (first: number) => `${proofs}/consistency?${new URLSearchParams({ projectSlug, first: String(first) })}`,
  };
}

/**
 * Each URL once, one at a time, until all are asked or `budgetMs` has passed
 * (at least `least` of them): a slow route stops early. Anything but 200 stops the bench.
 */
export async function sequential(urls: string[], budgetMs: number, least = 20): Promise<Latency> {
  const times: number[] = [];
  const started = performance.now();
  for (const url of urls) {
    if (times.length >= least && performance.now() - started > budgetMs) break;
    const { ms, status } = await timedGet(url);
    if (status !== 200) throw new Error(`${url} answered ${status}`);
    times.push(ms);
  }
  return latency(times);
}

/** C2SP's tile index: three-digit groups, all but the last prefixed with x (1234067: x001/x234/067). */
function tileIndex(index: number): string {
  const digits = String(index).padStart(Math.ceil(String(index).length / 3) * 3, '0');
  const groups = digits.match(/\d{3}/g) ?? [];
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

/** Full level-0 tiles (256 leaf hashes, 8 KiB) at random, one at a time; null when the target serves no tiles (before 29cdbbe). */
export async function tileFetches(base: string, projectSlug: string, size: number, count: number): Promise<Latency | null> {
  const full = Math.floor(size / 256);
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const { ms, status, bytes } = await timedGet(
      `${base}/api/forum/logs/${projectSlug}/tile/0/${tileIndex(Math.floor(Math.random() * full))}`,
    );
    if (status === 404 && i === 0) return null;
    if (status !== 200 || bytes !== 256 * 32) throw new Error(`tile answered ${status} with ${bytes} bytes`);
    times.push(ms);
  }
  return latency(times);
}

/** What /readyz and /healthz answered while `clients` clients asked for proofs as fast as answered. */
export interface UnderLoad {
  proofs: number;
  proofsPerSecond: number;
  proof: Latency;
  readyz: Latency;
  healthz: Latency;
}

/**
 * `clients` clients ask for proofs back to back for `seconds` (inclusion and
 * consistency in turn, over `urls`), while one poller asks /readyz and another
 * /healthz every 20 ms; a request under way when the time is up is waited
 * for and counted. /healthz answers from the event loop alone, /readyz also
 * asks Postgres (`select 1`, through the same pool as the proofs) and Redis.
 */
export async function proofsUnderLoad(base: string, urls: string[], clients: number, seconds: number): Promise<UnderLoad> {
  const stopAt = performance.now() + seconds * 1000;
  const proofTimes: number[] = [];
  let failures = 0;
  const client = async (first: number) => {
    for (let i = first; performance.now() < stopAt; i += clients) {
      const { ms, status } = await timedGet(urls[i % urls.length] as string);
      if (status !== 200) failures++;
      proofTimes.push(ms);
    }
  };
  const poll = async (path: string) => {
    const times: number[] = [];
    while (performance.now() < stopAt) {
      const { ms, status } = await timedGet(`${base}${path}`);
      if (status !== 200) failures++;
      times.push(ms);
      await sleep(20);
    }
    return latency(times);
  };
  const began = performance.now();
  const [, readyz, healthz] = await Promise.all([
    Promise.all(Array.from({ length: clients }, (_, c) => client(c))),
    poll('/readyz'),
    poll('/healthz'),
  ]);
  if (failures > 0) throw new Error(`${failures} requests failed under load`);
  const elapsed = (performance.now() - began) / 1000;
  return { proofs: proofTimes.length, proofsPerSecond: proofTimes.length / elapsed, proof: latency(proofTimes), readyz, healthz };
}

/** A signed action's POST with a retry key, sent again with it while the command is queued (503 command_pending). */
async function command(base: string, agent: TestAgent, fields: Record<string, unknown>): Promise<Record<string, unknown>> {
  const key = randomUUID();
  for (;;) {
    const response = await fetch(`${base}/api/forum/checkpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}`, 'idempotency-key': key },
      body: JSON.stringify(fields),
    });
    const body = (await response.json()) as { error?: { code?: string } } & Record<string, unknown>;
    if (response.status === 200) return body;
    if (response.status !== 503 || body.error?.code !== 'command_pending')
      throw new Error(`checkpoint ${String(fields.action)} answered ${response.status}: ${JSON.stringify(body)}`);
  }
}

/** One checkpoint by `agent`: prepare (the payload over the whole tree), sign with its key, publish; each step's milliseconds (signing not counted). */
export async function checkpointOnce(
  base: string,
  agent: TestAgent,
  projectSlug: string,
): Promise<{ prepare: number; publish: number; treeSize: number }> {
  const begin = performance.now();
  const prepared = await command(base, agent, { action: 'prepare', projectSlug });
  const prepare = performance.now() - begin;
  const signed = sign(prepared.signing as Signing, agent.keys);
  const sent = performance.now();
  const published = await command(base, agent, { action: 'publish', projectSlug, ...signed });
  const checkpoint = published.checkpoint as { treeSize: number };
  return { prepare, publish: performance.now() - sent, treeSize: checkpoint.treeSize };
}
