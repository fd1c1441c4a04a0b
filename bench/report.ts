import type { BenchResult } from './harness.ts';
import { processGroups } from './processCpu.ts';

const table = (header: string[], rows: string[][]) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
const ms = (n: number) => n.toFixed(3);

/**
 * The bench's tables: throughput and latency; CPU ms per request of each
 * process kind, with the total over all of them and the total without the
 * replicas (a Redis replica or Postgres standby only follows its primary);
 * per Redis node its CPU and the commands it executed per request; Postgres
 * work per request.
 */
export function report(results: BenchResult[]): void {
  console.log(
    table(
      ['scenario', 'requests', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'errors'],
      results.map((r) => [
        r.name,
        String(r.requests),
        String(r.requestsPerSecond),
        r.p50.toFixed(1),
        r.p95.toFixed(1),
        r.p99.toFixed(1),
        String(r.errors),
      ]),
    ),
  );
  console.log('\nCPU ms per request:');
  console.log(
    table(
      ['scenario', 'api', 'worker', 'pg primary', 'pg replicas', 'redis masters', 'redis replicas', 'total', 'total without replicas'],
      results.map((r) => {
        const cpu = r.cpuPerRequest;
        const total = processGroups.reduce((sum, group) => sum + cpu[group], 0);
        return [r.name, ...processGroups.map((group) => ms(cpu[group])), ms(total), ms(total - cpu.pgReplica - cpu.redisReplicas)];
      }),
    ),
  );
  const nodes = results[0]?.redisPerRequest ?? [];
  console.log('\nRedis per request, each node: CPU ms / commands executed (INFO commandstats):');
  console.log(
    table(
      ['scenario', 'commands, masters', ...nodes.map((node) => `:${node.port} ${node.role}`)],
      results.map((r) => [
        r.name,
        r.redisPerRequest
          .filter((node) => node.role === 'master')
          .reduce((sum, node) => sum + node.commands, 0)
          .toFixed(2),
        ...r.redisPerRequest.map((node) => `${ms(node.cpu)} / ${node.commands.toFixed(2)}`),
      ]),
    ),
  );
  console.log('\nPostgres per request:');
  console.log(
    table(
      ['scenario', 'primary commits', 'rows inserted', 'rows updated', 'of them HOT', 'index scans', 'seq scans', 'replica commits'],
      results.map((r) => {
        const pg = r.pgPerRequest;
        return [
          r.name,
          pg.commits.toFixed(2),
          pg.inserted.toFixed(2),
          pg.updated.toFixed(2),
          pg.hotUpdated.toFixed(2),
          pg.indexScans.toFixed(2),
          pg.seqScans.toFixed(3),
          r.replicaCommitsPerRequest.toFixed(2),
        ];
      }),
    ),
  );
}
