import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * compose.cluster.yaml is the Docker form of `npm run topology` (no Docker engine runs here): what can be
 * checked without one is that it parses, that Prometheus's scrape targets are its services, and that what
 * it mounts exists.
 */
interface Compose {
  services: Record<string, { volumes?: string[]; secrets?: { source: string }[] }>;
  secrets?: Record<string, unknown>;
  volumes?: Record<string, unknown>;
}
interface ScrapeJob {
  job_name: string;
  static_configs: { targets: string[] }[];
  relabel_configs?: { target_label?: string; replacement?: string }[];
}

const compose = parse(readFileSync('compose.cluster.yaml', 'utf8')) as Compose;
const prometheus = parse(readFileSync('config/prometheus/prometheus.yml', 'utf8')) as { scrape_configs: ScrapeJob[] };
const host = (target: string) => new URL(target.includes('://') ? target : `http://${target}`).hostname;

describe('compose.cluster.yaml', () => {
  it('runs a service for every scrape target of config/prometheus/prometheus.yml, and every multi-target exporter', () => {
    const hosts = prometheus.scrape_configs.flatMap((job) => [
      ...job.static_configs.flatMap((config) => config.targets.map(host)),
      ...(job.relabel_configs ?? []).filter((rule) => rule.target_label === '__address__').map((rule) => host(rule.replacement as string)),
    ]);
    expect(hosts.filter((name) => !(name in compose.services))).toEqual([]);
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['prometheus', 'grafana', 'redis-exporter']));
  });

  it('mounts only files of the repository that exist, named volumes it declares and secrets it defines', () => {
    const mounts = Object.values(compose.services).flatMap((service) =>
      (service.volumes ?? []).map((volume) => volume.split(':')[0] as string),
    );
    expect(mounts.filter((source) => source.startsWith('./') && !existsSync(source))).toEqual([]);
    expect(mounts.filter((source) => !source.startsWith('./') && !(source in (compose.volumes ?? {})))).toEqual([]);
    const secrets = Object.values(compose.services).flatMap((service) => (service.secrets ?? []).map((secret) => secret.source));
    expect(secrets.filter((name) => !(name in (compose.secrets ?? {})))).toEqual([]);
  });
});
