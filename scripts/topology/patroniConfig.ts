import type { ChildProcess } from 'node:child_process';
import { archiveCommand } from './pgBackRest.ts';

/**
 * Failover timings: a dead leader's key lapses after `ttl` seconds and a replica checks every `loop_wait`.
 * `retry_timeout` is how long the leader may fail to reach etcd before it demotes itself, so it must outlast
 * an etcd election after etcd's own leader dies: 3 s did not under load (a Patroni leader change, 3.5 s
 * without writes), and the renewal took 2.6 s of those 3 in a repro (docs/scaling.md). `ttl` is then the
 * least Patroni 3.0 accepts for it (at least loop_wait + 2 × retry_timeout); later releases refuse one under 20.
 */
const FAILOVER_TIMINGS = { ttl: 11, loop_wait: 1, retry_timeout: 5 } as const;

export interface Member {
  name: string;
  restPort: number;
  pgPort: number;
  dataDir: string;
  patroni: ChildProcess | null;
}

export interface EtcdMember {
  name: string;
  clientPort: number;
  peerPort: number;
  child: ChildProcess | null;
}

/** One etcd member's command line: a member of `etcd`, Patroni's store. */
export function etcdArgs(member: EtcdMember, etcd: EtcdMember[], dataDir: string, state: 'new' | 'existing'): string[] {
  const client = `http://127.0.0.1:${member.clientPort}`;
  const peer = `http://127.0.0.1:${member.peerPort}`;
  return [
    '--name',
    member.name,
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    client,
    '--advertise-client-urls',
    client,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    etcd.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(','),
    '--initial-cluster-state',
    state,
    '--initial-cluster-token',
    'agora',
    // A loopback cluster: elect within a second of losing a member.
    '--heartbeat-interval',
    '100',
    '--election-timeout',
    '1000',
  ];
}

/** One Patroni member's configuration (written as JSON, which is YAML). */
export function patroniConfig(member: Member, etcd: EtcdMember[], bin: string, dir: string) {
  return {
    scope: 'agora',
    namespace: '/agora/',
    name: member.name,
    restapi: { listen: `127.0.0.1:${member.restPort}`, connect_address: `127.0.0.1:${member.restPort}` },
    etcd3: { hosts: etcd.map((m) => `127.0.0.1:${m.clientPort}`) },
    bootstrap: {
      dcs: {
        ...FAILOVER_TIMINGS,
        maximum_lag_on_failover: 1_048_576,
        // A write is acknowledged once a standby has it too: the loss of the leader loses no acknowledged write.
        synchronous_mode: true,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: {
            // Throwaway clusters on a machine others share; a killed process still leaves its writes in the page cache.
            fsync: 'off',
            shared_preload_libraries: 'pg_stat_statements',
            // A worker frozen inside a batch transaction gives its locks up after 2 s, so another can take its job over.
            idle_in_transaction_session_timeout: '2s',
            wal_log_hints: 'on',
            // Every member archives once it leads (pgBackRest, scripts/topology/pgBackRest.ts); a quiet cluster
            // still closes a segment every 30 s, so no more than 30 s of writes sit outside the archive.
            archive_mode: 'on',
            archive_timeout: '30s',
          },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { auth: 'trust' }],
    },
    postgresql: {
      listen: `127.0.0.1:${member.pgPort}`,
      connect_address: `127.0.0.1:${member.pgPort}`,
      data_dir: member.dataDir,
      bin_dir: bin,
      pgpass: `${dir}/${member.name}.pgpass`,
      authentication: {
        superuser: { username: 'postgres', password: 'postgres' },
        replication: { username: 'postgres', password: 'postgres' },
        rewind: { username: 'postgres', password: 'postgres' },
      },
      pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust'],
      parameters: { unix_socket_directories: dir, archive_command: archiveCommand(dir, member.dataDir) },
    },
  };
}

/** HAProxy in front of the members: writes to whoever answers Patroni's /primary, reads to whoever answers /replica. */
export function postgresBalancerConfig(members: Member[], ports: { primary: number; replicas: number }): string {
  const servers = (check: string) =>
    [
      `  option httpchk GET /${check}`,
      '  http-check expect status 200',
      // Sessions to a node that stops being the leader (or a replica) are cut: pools reconnect to the right one.
      // After one failed check the next comes 100 ms later (fastinter), and a node that is down is asked every
      // 250 ms (downinter): a switchover moves the writes in about a quarter of a second once Patroni has promoted.
      '  default-server inter 500ms fastinter 100ms downinter 250ms fall 2 rise 1 on-marked-down shutdown-sessions',
      ...members.map((m) => `  server ${m.name} 127.0.0.1:${m.pgPort} check port ${m.restPort}`),
    ].join('\n');
  return [
    'global',
    '  maxconn 2000',
    // Server state changes with their time (notice and above; not every connection) in haproxy-postgres.log.
    '  log stderr format iso local0 notice',
    'defaults',
    '  log global',
    '  mode tcp',
    '  timeout connect 2s',
    '  timeout client 30m',
    '  timeout server 30m',
    '  timeout check 1s',
    // A connection refused by a node that just stopped (the old leader in a switchover) is passed on as refused,
    // not retried: HAProxy waits about a second per retry turn, and the pools reconnect sooner, to the new leader.
    '  retries 0',
    'listen postgres-primary',
    `  bind 127.0.0.1:${ports.primary}`,
    servers('primary'),
    'listen postgres-replicas',
    `  bind 127.0.0.1:${ports.replicas}`,
    '  balance roundrobin',
    servers('replica'),
    '',
  ].join('\n');
}
