import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { freePort } from '../chaos/services.ts';
import { logOutput, terminate } from './processes.ts';

/** Where each scrape job of config/prometheus/prometheus.yml finds its targets in the topology. */
export interface MonitoredPorts {
  apis: number[];
  /** Each worker's METRICS_PORT. */
  workers: number[];
  redis: number[];
  /** Each Patroni member: its Postgres port (one exporter each) and its REST API port (/metrics). */
  postgres: { pgPort: number; restPort: number }[];
  /** HAProxy's `use-service prometheus-exporter` frontend. */
  haproxy: number;
}

interface ScrapeConfig {
  job_name: string;
  static_configs?: { targets: string[] }[];
  relabel_configs?: { target_label?: string; replacement?: string }[];
  authorization?: { credentials_file?: string };
}

export interface MonitoringProcess {
  role: 'prometheus' | 'redis exporter' | 'postgres exporter';
  name: string;
  pid: number;
  port: number;
}

/**
 * Scrape every 2 s and evaluate every second, not every 15 s: a fault of the chaos suite lasts seconds. The
 * rules' `for:` durations are alerts.yml's own (rule_files names that file) unless the chaos suite compresses them.
 * Not a 1 s scrape: its 1 s timeout was missed by busy APIs and a Postgres exporter meeting a dead server
 * on a loaded machine, which read as AgoraProcessDown and AgoraExporterDown going pending in a quiet run.
 */
const SCRAPE_INTERVAL = '2s';
const EVALUATION_INTERVAL = '1s';

const ALERT_RULES = 'config/prometheus/alerts.yml';

/** A Prometheus duration (`30s`, `1m`, `1h30m`...) in seconds. */
function seconds(duration: string): number {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
  let total = 0;
  for (const [, value, unit] of duration.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) total += Number(value) * (units[unit as string] ?? 0);
  return total;
}

/**
 * alerts.yml as it is, or with every `for:` divided by `scale` (at least 1 s), written beside the config.
 * The chaos suite's faults last seconds where the rules wait minutes before paging (a process back within a
 * minute should not wake anyone): with time compressed 60×, each fault shows that its rule's expression sees
 * it and that it would page had it lasted as long as the rule's `for:`, on the same metrics, scrapes and
 * expressions. Range windows in the expressions are left as written.
 */
function alertRulesFile(dir: string, scale: number): string {
  if (scale === 1) return resolve(ALERT_RULES);
  const rules = parse(readFileSync(ALERT_RULES, 'utf8')) as { groups: { rules: { for?: string }[] }[] };
  for (const rule of rules.groups.flatMap((group) => group.rules)) {
    if (rule.for) rule.for = `${Math.max(1, Math.round(seconds(rule.for) / scale))}s`;
  }
  const file = join(dir, 'alerts.yml');
  writeFileSync(file, stringify(rules));
  return file;
}

/** config/prometheus/prometheus.yml with the topology's targets, token file and rules: same jobs, same rules. */
function topologyPrometheusConfig(
  ports: MonitoredPorts,
  exporters: { redis: number; postgres: number[] },
  tokenFile: string,
  rulesFile: string,
): object {
  const shared = parse(readFileSync('config/prometheus/prometheus.yml', 'utf8')) as { scrape_configs: ScrapeConfig[] };
  const local = (port: number) => `127.0.0.1:${port}`;
  const targets: Record<string, string[]> = {
    'agora-api': ports.apis.map(local),
    'agora-worker': ports.workers.map(local),
    redis: ports.redis.map((port) => `redis://${local(port)}`),
    postgres: exporters.postgres.map(local),
    haproxy: [local(ports.haproxy)],
    patroni: ports.postgres.map((member) => local(member.restPort)),
  };
  const scrapeConfigs = shared.scrape_configs.map((job) => {
    const own = targets[job.job_name];
    // A job added to the shared file must be given its topology targets here, not silently dropped.
    if (!own) throw new Error(`topology: no targets for scrape job ${job.job_name} of config/prometheus/prometheus.yml`);
    return {
      ...job,
      static_configs: [{ targets: own }],
      ...(job.authorization?.credentials_file ? { authorization: { ...job.authorization, credentials_file: tokenFile } } : {}),
      // The multi-target exporter's address is the relabelling that sets __address__.
      ...(job.relabel_configs
        ? {
            relabel_configs: job.relabel_configs.map((rule) =>
              rule.target_label === '__address__' ? { ...rule, replacement: local(exporters.redis) } : rule,
            ),
          }
        : {}),
    };
  });
  return {
    global: { scrape_interval: SCRAPE_INTERVAL, scrape_timeout: SCRAPE_INTERVAL, evaluation_interval: EVALUATION_INTERVAL },
    rule_files: [rulesFile],
    scrape_configs: scrapeConfigs,
  };
}

/** Debian's prometheus, one multi-target prometheus-redis-exporter and one prometheus-postgres-exporter per Patroni member. */
export class Monitoring {
  readonly dir: string;
  private readonly children: { process: MonitoringProcess; child: ChildProcess }[] = [];
  private readonly logDir: string;
  prometheusPort = 0;

  private constructor(dir: string, logDir: string) {
    this.dir = dir;
    this.logDir = logDir;
  }

  get url(): string {
    return `http://127.0.0.1:${this.prometheusPort}`;
  }

  static async start(ports: MonitoredPorts, operatorToken: string, logDir: string, alertTimeScale = 1): Promise<Monitoring> {
    const monitoring = new Monitoring(mkdtempSync(join(tmpdir(), 'agora-prometheus-')), logDir);
    try {
      const tokenFile = join(monitoring.dir, 'operator-token');
      writeFileSync(tokenFile, operatorToken, { mode: 0o600 });
      chmodSync(tokenFile, 0o600);
      // No -redis.addr: each scrape names its node (/scrape?target=redis://...), so /metrics touches no Redis.
      const redis = await monitoring.spawnHttp(
        'redis exporter',
        'redis-exporter',
        '/usr/bin/prometheus-redis-exporter',
        (port) => ['-redis.addr=', `-web.listen-address=127.0.0.1:${port}`],
        '/health',
      );
      const postgres: number[] = [];
      for (const [i, member] of ports.postgres.entries()) {
        const env = { DATA_SOURCE_NAME: `postgresql://postgres:postgres@127.0.0.1:${member.pgPort}/postgres?sslmode=disable` };
        const args = (port: number) => [
          `--web.listen-address=127.0.0.1:${port}`,
          `--extend.query-path=${resolve('config/prometheus/postgres-exporter-queries.yaml')}`,
        ];
        postgres.push(
          await monitoring.spawnHttp(
            'postgres exporter',
            `postgres-exporter-${i + 1}`,
            '/usr/bin/prometheus-postgres-exporter',
            args,
            '/metrics',
            env,
          ),
        );
      }
      const configFile = join(monitoring.dir, 'prometheus.yml');
      // JSON is YAML: Prometheus reads it as written.
      const rulesFile = alertRulesFile(monitoring.dir, alertTimeScale);
      writeFileSync(configFile, JSON.stringify(topologyPrometheusConfig(ports, { redis, postgres }, tokenFile, rulesFile), null, 2));
      const args = (port: number) => [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(monitoring.dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ];
      monitoring.prometheusPort = await monitoring.spawnHttp('prometheus', 'prometheus', '/usr/bin/prometheus', args, '/-/ready');
      await monitoring.untilEveryTargetScraped();
    } catch (error) {
      await monitoring.stop();
      throw error;
    }
    return monitoring;
  }

  /** Starts one engine on a free port, logging to logDir/<name>.log, and waits until `readyPath` answers 200. */
  private async spawnHttp(
    role: MonitoringProcess['role'],
    name: string,
    command: string,
    args: (port: number) => string[],
    readyPath: string,
    env: Record<string, string> = {},
  ): Promise<number> {
    const port = await freePort();
    // In the topology's folder, never the caller's, which may be a clone only its owner enters (scripts/topology.ts).
    const child = spawn(command, args(port), { cwd: this.dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    logOutput(child, join(this.logDir, `${name}.log`));
    let spawnError: Error | null = null;
    child.once('error', (error) => {
      spawnError = error;
    });
    if (child.pid !== undefined) this.children.push({ process: { role, name, pid: child.pid, port }, child });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (spawnError) throw new Error(`${command} did not start: ${(spawnError as Error).message}`);
      if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}; see ${join(this.logDir, `${name}.log`)}`);
      if ((await fetch(`http://127.0.0.1:${port}${readyPath}`).catch(() => null))?.status === 200) return port;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${command} did not answer ${readyPath} on port ${port} within 60 s`);
  }

  /**
   * Ready is not scraped: until every target has answered once, rules evaluate on part of the picture
   * (sum(patroni_primary) over one replica reads "no leader"), which a caller would take for an alert.
   */
  private async untilEveryTargetScraped(): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const reply = await fetch(`${this.url}/api/v1/targets?state=active`).catch(() => null);
      const targets = reply?.ok ? ((await reply.json()) as { data: { activeTargets: { health: string }[] } }).data.activeTargets : [];
      if (targets.length > 0 && targets.every((target) => target.health !== 'unknown')) return;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`Prometheus did not scrape every target within 60 s; see ${this.url}/targets`);
  }

  processes(): MonitoringProcess[] {
    return this.children.map(({ process }) => process);
  }

  pids(): number[] {
    return this.children.map(({ process }) => process.pid);
  }

  /** Stops every process and removes the folder (its config, the token file and Prometheus's data). */
  async stop(): Promise<void> {
    await Promise.all(this.children.map(({ child }) => terminate(child, 10_000)));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
