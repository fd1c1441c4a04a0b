import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, postgresBin } from '../chaos/services.ts';
import { etcdArgs, patroniConfig, postgresBalancerConfig, type EtcdMember, type Member } from './patroniConfig.ts';
import { backupConfigPath, initialBackup, prepareRepository, repositoryFromEnv } from './pgBackRest.ts';
import { logOutput, running, terminate } from './processes.ts';

const run = promisify(execFile);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Patroni stops its Postgres on SIGTERM within seconds; one stuck (a bootstrap that lost its initdb) never does. */
const STOP_GRACE_MS = 30_000;

/** What Patroni's REST API says of one member (GET /cluster). */
export interface PatroniMemberState {
  name: string;
  role: 'leader' | 'sync_standby' | 'replica' | string;
  state: string;
  port: number;
}

function postgresIds(): { uid: number; gid: number } {
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
  };
}

/**
 * Postgres as a Patroni cluster on this machine: three etcd members as its
 * store, three Patroni members (a leader and two replicas, one of them a
 * synchronous standby: `synchronous_mode`), and HAProxy in front with one
 * port for writes (whoever answers Patroni's /primary) and one for reads
 * (whoever answers /replica). A client never needs to know who leads.
 */
export class PatroniCluster {
  readonly dir: string;
  readonly members: Member[];
  readonly etcd: EtcdMember[];
  readonly ports: { primary: number; replicas: number };
  private balancer: ChildProcess | null = null;
  private readonly bin: string;
  /** Where the etcd, Patroni (with its Postgres) and HAProxy logs go; they outlive stop(). */
  readonly logDir: string;

  private constructor(
    dir: string,
    logDir: string,
    bin: string,
    members: Member[],
    etcd: EtcdMember[],
    ports: { primary: number; replicas: number },
  ) {
    this.dir = dir;
    this.logDir = logDir;
    this.bin = bin;
    this.members = members;
    this.etcd = etcd;
    this.ports = ports;
  }

  static async start(logDir?: string): Promise<PatroniCluster> {
    const bin = postgresBin();
    if (!bin) throw new Error('no Postgres server binaries under /usr/lib/postgresql');
    const dir = mkdtempSync(join(tmpdir(), 'agora-patroni-'));
    chmodSync(dir, 0o755);
    const etcd: EtcdMember[] = [];
    for (const n of [1, 2, 3]) etcd.push({ name: `etcd${n}`, clientPort: await freePort(), peerPort: await freePort(), child: null });
    const members: Member[] = [];
    for (const n of [1, 2, 3])
      members.push({ name: `pg${n}`, restPort: await freePort(), pgPort: await freePort(), dataDir: join(dir, `pg${n}`), patroni: null });
    const cluster = new PatroniCluster(dir, logDir ?? dir, bin, members, etcd, { primary: await freePort(), replicas: await freePort() });
    try {
      // Before any Postgres starts: every member's archive_command names this configuration.
      prepareRepository(dir, repositoryFromEnv(process.env, join(dir, 'pgbackrest', 'repo')), dir);
      for (const member of etcd) cluster.startEtcd(member, 'new');
      const etcdExited = () => etcd.find((m) => !running(m.child))?.name;
      await cluster.until('etcd to have a leader', async () => (await cluster.etcdHealthy()) === 3, 30_000, etcdExited);
      for (const member of members) cluster.startPatroni(member);
      const patroniExited = () => members.find((m) => !running(m.patroni))?.name ?? etcdExited();
      await cluster.until('a leader and two streaming replicas, one synchronous', () => cluster.complete(), 120_000, patroniExited);
      cluster.startBalancer();
      const balancerExited = () => (running(cluster.balancer) ? patroniExited() : 'haproxy-postgres');
      await cluster.until('HAProxy to reach the leader', () => cluster.accepts(cluster.ports.primary), 30_000, balancerExited);
      const leader = await cluster.leader();
      await initialBackup({ config: backupConfigPath(dir), dataDir: leader.dataDir, pgPort: leader.pgPort });
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** `cwd`: each engine works in a folder of the topology's own, never the caller's (a clone only its owner may enter). */
  private spawnLogged(
    name: string,
    command: string,
    args: string[],
    options: { cwd: string; uid?: number; gid?: number; env?: NodeJS.ProcessEnv },
  ): ChildProcess {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    const log = logOutput(child, join(this.logDir, `${name}.log`));
    child.once('error', (error) => log.write(`spawn failed: ${error.message}\n`));
    return child;
  }

  private startEtcd(member: EtcdMember, state: 'new' | 'existing'): void {
    const dataDir = join(this.dir, member.name);
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    member.child = this.spawnLogged(member.name, 'etcd', etcdArgs(member, this.etcd, dataDir, state), { cwd: dataDir });
  }

  private config(member: Member): string {
    const file = join(this.dir, `${member.name}.yml`);
    // JSON is YAML.
    writeFileSync(file, JSON.stringify(patroniConfig(member, this.etcd, this.bin, this.dir), null, 2));
    return file;
  }

  private startPatroni(member: Member): void {
    const file = this.config(member);
    const ids: { uid?: number; gid?: number } = process.getuid?.() === 0 ? postgresIds() : {};
    if (ids.uid !== undefined) execFileSync('chown', ['postgres:postgres', this.dir, file]);
    // Patroni's bootstrap starts Postgres from a Python subprocess that first enters Patroni's own working folder.
    const env = { ...process.env, HOME: this.dir, TMPDIR: this.dir };
    member.patroni = this.spawnLogged(member.name, 'patroni', [file], { ...ids, cwd: this.dir, env });
  }

  private startBalancer(): void {
    const file = join(this.dir, 'haproxy-postgres.cfg');
    writeFileSync(file, postgresBalancerConfig(this.members, this.ports));
    this.balancer = this.spawnLogged('haproxy-postgres', 'haproxy', ['-db', '-f', file], { cwd: this.dir });
  }

  /** Fails at once, not at the deadline, when `exited` names a process that is gone (a broken install, a refused setting). */
  private async until(what: string, check: () => Promise<boolean> | boolean, ms: number, exited?: () => string | undefined): Promise<void> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const gone = exited?.();
      if (gone) throw new Error(`patroni: ${gone} exited while waiting for ${what} (logs in ${this.logDir})`);
      if (
        await Promise.resolve()
          .then(check)
          .catch(() => false)
      )
        return;
      await pause(200);
    }
    throw new Error(`patroni: ${what} did not happen within ${ms / 1000} s (logs in ${this.logDir})`);
  }

  private async etcdHealthy(): Promise<number> {
    const answers = await Promise.all(
      this.etcd.map((m) =>
        fetch(`http://127.0.0.1:${m.clientPort}/health`, { signal: AbortSignal.timeout(1000) }).then(
          (r) => r.ok,
          () => false,
        ),
      ),
    );
    return answers.filter(Boolean).length;
  }

  private async accepts(port: number): Promise<boolean> {
    await run(join(this.bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-t', '1']);
    return true;
  }

  /** Every member as Patroni sees it, asked of any member that answers. */
  async state(): Promise<PatroniMemberState[]> {
    for (const member of this.members.filter((m) => running(m.patroni))) {
      const reply = await fetch(`http://127.0.0.1:${member.restPort}/cluster`, { signal: AbortSignal.timeout(1000) }).catch(() => null);
      if (reply?.ok) return ((await reply.json()) as { members: PatroniMemberState[] }).members;
    }
    return [];
  }

  /** A leader running, and every live member either it or a streaming replica, one of them synchronous. */
  async complete(): Promise<boolean> {
    const live = this.members.filter((m) => running(m.patroni));
    const state = await this.state();
    const serving = state.filter((m) => live.some((l) => l.name === m.name) && ['running', 'streaming'].includes(m.state));
    const roles = serving.map((m) => m.role);
    return (
      serving.length === live.length &&
      roles.filter((r) => r === 'leader').length === 1 &&
      (live.length < 2 || roles.includes('sync_standby'))
    );
  }

  async leader(): Promise<Member> {
    const name = (await this.state()).find((m) => m.role === 'leader')?.name;
    const member = this.members.find((m) => m.name === name);
    if (!member) throw new Error('patroni: no leader');
    return member;
  }

  /** The postmaster pid of a member, from its data folder. */
  postmasterPid(member: Member): number | undefined {
    const file = join(member.dataDir, 'postmaster.pid');
    if (!existsSync(file)) return undefined;
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  /** The whole node at once, as a machine that dies: its Patroni and its Postgres, SIGKILL. */
  killNode(member: Member): void {
    const postmaster = this.postmasterPid(member);
    member.patroni?.kill('SIGKILL');
    if (postmaster) process.kill(postmaster, 'SIGKILL');
  }

  /** The etcd member that is Raft's leader now: its loss costs an election, the worst an etcd member's loss does. */
  async etcdLeader(): Promise<EtcdMember> {
    const statuses = await Promise.all(
      this.etcd.map((m) =>
        fetch(`http://127.0.0.1:${m.clientPort}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(1000) })
          .then((r) => r.json() as Promise<{ header: { member_id: string }; leader: string }>)
          .catch(() => null),
      ),
    );
    const leaderId = statuses.find((s) => s?.leader)?.leader;
    const member = this.etcd[statuses.findIndex((s) => s?.header.member_id === leaderId)];
    if (!member) throw new Error('etcd: no member is the leader');
    return member;
  }

  /** SIGKILL one etcd member, then start it again with its data (it rejoins). */
  async bounceEtcd(member: EtcdMember, downMs: number): Promise<void> {
    member.child?.kill('SIGKILL');
    await pause(downMs);
    this.startEtcd(member, 'existing');
  }

  /** A planned switchover to a synchronous standby (what `patronictl switchover` does), through the leader's REST API. */
  async switchover(): Promise<void> {
    const leader = await this.leader();
    const candidate = (await this.state()).find((m) => m.role === 'sync_standby')?.name;
    // What an operator runs before a planned switchover (docs/operations.md): the leader's shutdown checkpoint then has
    // little left to write, and writes stall for the demotion and the promotion only.
    await run(join(this.bin, 'psql'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(leader.pgPort),
      '-U',
      'postgres',
      '-d',
      'postgres',
      '-c',
      'CHECKPOINT',
    ]);
    const reply = await fetch(`http://127.0.0.1:${leader.restPort}/switchover`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ leader: leader.name, candidate }),
    });
    if (!reply.ok) throw new Error(`patroni: switchover refused: ${reply.status} ${await reply.text()}`);
  }

  /** Waits until the cluster is complete again (its live members). */
  untilComplete(ms = 60_000): Promise<void> {
    return this.until('the cluster to be complete again', () => this.complete(), ms);
  }

  url(port: number, database: string): string {
    return `postgres://postgres@127.0.0.1:${port}/${database}`;
  }

  /** Processes running now, by role, for `topology status`. */
  processes(): { role: string; name: string; pid: number | undefined; port: number; pidFile?: string }[] {
    return [
      ...this.etcd.filter((m) => running(m.child)).map((m) => ({ role: 'etcd', name: m.name, pid: m.child?.pid, port: m.clientPort })),
      ...this.members
        .filter((m) => running(m.patroni))
        .map((m) => ({ role: 'patroni', name: m.name, pid: m.patroni?.pid, port: m.restPort })),
      ...this.members
        .map((m) => ({
          role: 'postgres',
          name: m.name,
          pid: this.postmasterPid(m),
          port: m.pgPort,
          pidFile: join(m.dataDir, 'postmaster.pid'),
        }))
        .filter((p) => p.pid !== undefined),
      ...(running(this.balancer)
        ? [{ role: 'postgres balancer', name: 'haproxy-postgres', pid: this.balancer.pid, port: this.ports.primary }]
        : []),
    ];
  }

  pids(): number[] {
    return this.processes().flatMap((p) => (p.pid ? [p.pid] : []));
  }

  async stop(): Promise<void> {
    // Patroni stops its Postgres on SIGTERM; a member whose Patroni was killed leaves a postmaster behind.
    await Promise.all([terminate(this.balancer, STOP_GRACE_MS), ...this.members.map((m) => terminate(m.patroni, STOP_GRACE_MS))]);
    for (const member of this.members) {
      const postmaster = this.postmasterPid(member);
      if (postmaster) process.kill(postmaster, 'SIGKILL');
    }
    await Promise.all(this.etcd.map((m) => terminate(m.child, STOP_GRACE_MS)));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
