import type { BenchResult, BenchTarget } from './harness.ts';
import { processGroups, type ProcessGroup } from './processCpu.ts';

/** The rendered-read cache's counters of the target (agora_read_cache_total), read from its /metrics. */
export interface CacheCounts {
  hits: number;
  misses: number;
}

export async function cacheCounts(target: BenchTarget, operatorToken: string): Promise<CacheCounts> {
  const text = await (await fetch(`${target.url}/metrics`, { headers: { authorization: `Bearer ${operatorToken}` } })).text();
  const count = (outcome: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith('agora_read_cache_total{') && line.includes(`outcome="${outcome}"`))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  // A read that shared another's render under way was answered without a render of its own: a hit, for the CPU it cost.
  return { hits: count('hit') + count('shared'), misses: count('miss') };
}

export const WHILE_WRITING = '-while-writing';
/** The share of a run's reads that must miss for their CPU to stand out from the writes' spread. */
const MEASURABLE_MISSES = 0.01;

const table = (header: string[], rows: string[][]) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
const cpuTotals = (r: BenchResult): Record<ProcessGroup, number> =>
  Object.fromEntries(processGroups.map((g) => [g, r.cpuPerRequest[g] * r.requests])) as Record<ProcessGroup, number>;
const ratio = (c: CacheCounts | undefined) => (c && c.hits + c.misses > 0 ? `${((100 * c.hits) / (c.hits + c.misses)).toFixed(1)}%` : '-');

/**
 * Each read scenario quiet and while writers post at a fixed rate into the
 * same projects: reads/s of both and their ratio, the cache's hit ratio, and
 * the CPU milliseconds per read miss per process while writing: what a read
 * that the cache could not answer costs. That is the run's CPU less the same
 * writes alone (`writes-alone`, same rate and duration) and less its hits at
 * the quiet run's CPU per read (a quiet run is all hits), over the misses.
 * Printed as measured, marked `*` when under 1% of the reads missed: then
 * the misses' CPU is smaller than the run-to-run spread of the writes' own,
 * and the figure is noise (READ_CACHE_BYTES=0, every read a miss, measures a
 * miss directly: docs/benchmarks.md).
 */
export function reportReadsWhileWriting(results: BenchResult[], cache: Map<string, CacheCounts>): void {
  const byName = new Map(results.map((r) => [r.name, r]));
  const alone = byName.get('writes-alone');
  const rows: string[][] = [];
  for (const busy of results.filter((r) => r.name.endsWith(WHILE_WRITING))) {
    const name = busy.name.slice(0, -WHILE_WRITING.length);
    const quiet = byName.get(name);
    const { hits = 0, misses = 0 } = cache.get(busy.name) ?? {};
    const busyCpu = cpuTotals(busy);
    const writesCpu = alone ? cpuTotals(alone) : null;
    const perMiss = (group: ProcessGroup) =>
      misses > 0 && writesCpu && quiet ? (busyCpu[group] - writesCpu[group] - hits * quiet.cpuPerRequest[group]) / misses : Number.NaN;
    const apiAndPg = perMiss('api') + perMiss('pgPrimary');
    const noise = misses < MEASURABLE_MISSES * busy.requests ? '*' : '';
    const shown = (ms: number) => (Number.isNaN(ms) ? '-' : `${ms.toFixed(3)}${noise}`);
    rows.push([
      name,
      quiet ? String(quiet.requestsPerSecond) : '-',
      String(busy.requestsPerSecond),
      quiet ? `${(quiet.requestsPerSecond / Math.max(1, busy.requestsPerSecond)).toFixed(2)}x` : '-',
      String(Math.round(busy.backgroundRequests / (busy.requests > 0 ? busy.requests / busy.requestsPerSecond : 1))),
      ratio(cache.get(name)),
      ratio(cache.get(busy.name)),
      String(misses),
      ...(['api', 'pgPrimary', 'redisMasters'] as ProcessGroup[]).map((g) => shown(perMiss(g))),
      shown(apiAndPg),
    ]);
  }
  if (rows.length === 0) return;
  console.log(
    '\nReads while writing (CPU ms per read miss: the run less writes-alone and its hits at the quiet CPU per read, over the misses; ' +
      "* under 1% of the reads missed, and the figure is within the spread of the writes' own CPU):",
  );
  console.log(
    table(
      [
        'read',
        'quiet req/s',
        'writing req/s',
        'drop',
        'writes/s',
        'hit ratio quiet',
        'hit ratio writing',
        'misses writing',
        'api',
        'pg primary',
        'redis masters',
        'api + pg',
      ],
      rows,
    ),
  );
}
