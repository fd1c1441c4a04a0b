import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { asClusterOwner } from '../chaos/services.ts';
import type { PostgresState } from '../topology/postgresState.ts';

const run = promisify(execFile);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type MemberState = PostgresState['members'][number];

/** Patroni's states of a member whose Postgres is down and that Patroni will not bring back by itself. */
const FAILED_STATES = /^(stopped|crashed|start failed|restart failed)/;

interface ClusterView {
  members: { name: string; role: string; state: string; timeline?: number; lag?: number | string }[];
  pause?: boolean;
}

/**
 * The topology's Patroni cluster seen from outside its keeper, through Patroni's REST API and pg_ctl: what a
 * restore needs to take Postgres out of Patroni's hands and give it back.
 */
export class PatroniControl {
  readonly pg: PostgresState;
  readonly bin: string;

  constructor(pg: PostgresState, bin: string) {
    this.pg = pg;
    this.bin = bin;
  }

  async view(): Promise<ClusterView | null> {
    for (const member of this.pg.members) {
      const reply = await fetch(`http://127.0.0.1:${member.restPort}/cluster`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
      if (reply?.ok) return (await reply.json()) as ClusterView;
    }
    return null;
  }

  async leader(): Promise<MemberState | null> {
    const name = (await this.view())?.members.find((m) => m.role === 'leader')?.name;
    return this.pg.members.find((m) => m.name === name) ?? null;
  }

  /** Maintenance mode on or off (`patronictl pause`/`resume`): paused, Patroni neither starts, stops nor fails Postgres over. */
  async setPaused(paused: boolean): Promise<void> {
    let answered = false;
    for (const member of this.pg.members) {
      const reply = await fetch(`http://127.0.0.1:${member.restPort}/config`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ pause: paused }),
        signal: AbortSignal.timeout(5000),
      }).catch(() => null);
      if (reply?.ok) {
        answered = true;
        break;
      }
    }
    if (!answered) throw new Error(`no Patroni member took pause=${paused}`);
    // Each member reads the setting on its next loop; none may act on the old one once this returns.
    await this.until(`every Patroni member ${paused ? 'paused' : 'resumed'}`, 30_000, async () => {
      const seen = await Promise.all(
        this.pg.members.map((m) =>
          fetch(`http://127.0.0.1:${m.restPort}/patroni`, { signal: AbortSignal.timeout(2000) })
            .then((r) => r.json() as Promise<{ pause?: boolean }>)
            .then((body) => Boolean(body.pause) === paused)
            .catch(() => false),
        ),
      );
      return seen.every(Boolean);
    });
  }

  /** A member's data removed and cloned again from the leader (`patronictl reinit --force`). */
  async reinitialize(member: MemberState): Promise<void> {
    await this.until(`Patroni to take the re-clone of ${member.name}`, 60_000, async () => {
      const reply = await fetch(`http://127.0.0.1:${member.restPort}/reinitialize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ force: true }),
        signal: AbortSignal.timeout(10_000),
      });
      return reply.ok;
    });
  }

  async pgCtl(args: string[], timeoutMs = 600_000): Promise<string> {
    const [file, argv] = asClusterOwner(`${this.bin}/pg_ctl`, args);
    const { stdout } = await run(file, argv, { timeout: timeoutMs, cwd: '/' });
    return stdout;
  }

  /** Stops a member's Postgres if it runs (fast: sessions cut, a clean shutdown checkpoint). */
  async stopPostgres(member: MemberState): Promise<void> {
    await this.pgCtl(['stop', '-D', member.dataDir, '-m', 'fast', '-w', '-t', '120']).catch((error: { stderr?: string }) => {
      if (!/not running|No such file|does not exist/i.test(error.stderr ?? '')) throw error;
    });
  }

  async sql(member: MemberState, query: string, database = 'postgres'): Promise<string> {
    const args = ['-h', this.pg.dir, '-p', String(member.pgPort), '-U', 'postgres', '-d', database, '-v', 'ON_ERROR_STOP=1', '-Atc', query];
    const [file, argv] = asClusterOwner(`${this.bin}/psql`, args);
    const { stdout } = await run(file, argv, { timeout: 600_000, cwd: '/' });
    return stdout.trim();
  }

  /** A leader and every member running or streaming, one of them synchronous: the cluster as `topology up` leaves it. */
  async complete(): Promise<boolean> {
    const view = await this.view();
    if (!view || view.pause) return false;
    const serving = view.members.filter((m) => ['running', 'streaming'].includes(m.state));
    return (
      serving.length === this.pg.members.length &&
      serving.filter((m) => m.role === 'leader').length === 1 &&
      serving.some((m) => m.role === 'sync_standby')
    );
  }

  /** The members as Patroni last saw them, for an error an operator can act on. */
  async describe(): Promise<string> {
    const view = await this.view();
    if (!view) return 'no Patroni member answered';
    const members = view.members.map((m) => `${m.name} ${m.role} ${m.state} timeline ${m.timeline ?? '?'} lag ${m.lag ?? '?'}`);
    return `${view.pause ? 'paused; ' : ''}${members.join('; ')}`;
  }

  /**
   * Waits until the cluster is complete again. A replica whose clone failed (its Postgres stopped, crashed or unable
   * to start from what the clone left) is given another re-clone, as an operator would, up to three in all.
   */
  async untilReplicasServe(leader: MemberState, ms: number): Promise<void> {
    const failedSince = new Map<string, number>();
    const retries = new Map<string, number>();
    await this.until('the cluster complete again', ms, async () => {
      if (await this.complete()) return true;
      const view = await this.view();
      for (const member of this.pg.members.filter((m) => m !== leader)) {
        const state = view?.members.find((m) => m.name === member.name)?.state ?? 'missing';
        if (!FAILED_STATES.test(state)) {
          failedSince.delete(member.name);
          continue;
        }
        const since = failedSince.get(member.name) ?? Date.now();
        failedSince.set(member.name, since);
        const tries = retries.get(member.name) ?? 0;
        if (Date.now() - since < 20_000 || tries >= 3) continue;
        retries.set(member.name, tries + 1);
        failedSince.delete(member.name);
        await this.reinitialize(member);
      }
      return false;
    });
  }

  async until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await check().catch(() => false)) return;
      await pause(200);
    }
    throw new Error(`${what} did not happen within ${ms / 1000} s (${await this.describe().catch((error: Error) => error.message)})`);
  }
}
