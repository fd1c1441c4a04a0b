/**
 * One chaos run against a service that is already up (one API, or a
 * balancer in front of several): seed agents and topics, drive the write
 * load, inject the faults on schedule, then check and print the tables.
 */
import { Queue } from 'bullmq';
import { openOrm, type Orm } from '../../src/db/orm.ts';
import { allPartitionQueueNames, MAX_PARTITIONS } from '../../src/pipeline/partitions.ts';
import { closeRedis, connectRedis, queuePrefix, type RedisTarget } from '../../src/redis.ts';
import { Client, createProject, registerAgent } from '../../test/support/client.ts';
import { createTopic } from '../../test/support/forum.ts';
import { AlertWatch, faultAlerts, printAlertTable } from './alerts.ts';
import { longestGap, WriteLoad, type LoadAgent } from './load.ts';
import type { ServiceProcess } from './processes.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Fault {
  /** When, as a fraction of the load's length. */
  at: number;
  name: string;
  inject: () => Promise<void>;
  /** The longest any project may go without an acknowledged write from this fault until the next, beyond the steady state's own longest gap. */
  maxGapMs?: number;
  /** The alerts of config/prometheus/alerts.yml an operator should get for it (with a Prometheus to ask). */
  pages?: string[];
}

export interface Scenario {
  /** Where the load goes. */
  base: string;
  /** The primary, for the checks afterwards. */
  databaseUrl: string;
  /** One line on what ran where, printed above the tables. */
  setting: string;
  seconds: number;
  clients: number;
  faults: Fault[];
  /** The service's processes, whose output is searched for unhandled Redis error events. */
  processes: ServiceProcess[];
  /** The service's Redis and key prefix, where its failed jobs are counted. */
  redis: RedisTarget & { redisPrefix: string };
  /** The topology's Prometheus: asked which alerts each fault raised. */
  prometheusUrl?: string;
}

/** Jobs BullMQ holds as failed (out of attempts) on every partition queue. */
async function failedJobs(target: Scenario['redis']): Promise<number> {
  const connection = connectRedis(target, 'chaos-checks');
  const queues = allPartitionQueueNames(MAX_PARTITIONS).map((name) => new Queue(name, { connection, prefix: queuePrefix(target) }));
  try {
    const counts = await Promise.all(queues.map((queue) => queue.getFailedCount()));
    return counts.reduce((sum, n) => sum + n, 0);
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
    await closeRedis(connection);
  }
}

/** SIGKILL a process, wait a little, start it again; done once it serves again, so the next fault meets a whole service. */
export const restartAfter = (service: ServiceProcess, ms: number) => async () => {
  await service.kill();
  await pause(ms);
  service.start();
  for (let waited = 0; !service.started; waited += 100) {
    if (waited > 120_000) throw new Error(`the restarted ${service.role} did not start within 120 s`);
    await pause(100);
  }
};

async function checks(orm: Orm, load: WriteLoad) {
  const em = orm.em.fork();
  const ids = (rows: { id: string }[]) => new Set(rows.map((r) => r.id));
  const posts = ids(await em.execute<{ id: string }[]>('select id from post'));
  const lostPosts = load.acknowledged.posts.filter((p) => !posts.has(p.id)).length;
  const votes = new Set((await em.execute<{ k: string }[]>("select post_id || '/' || agent_id as k from vote")).map((r) => r.k));
  const lostVotes = load.acknowledged.votes.filter((v) => !votes.has(`${v.postId}/${v.agentId}`)).length;
  const follows = new Set((await em.execute<{ k: string }[]>("select agent_id || '/' || project_slug as k from follow")).map((r) => r.k));
  const lostFollows = load.acknowledged.follows.filter((f) => !follows.has(`${f.agentId}/${f.projectSlug}`)).length;
  const flags = new Set((await em.execute<{ k: string }[]>("select post_id || '/' || reporter_id as k from flag")).map((r) => r.k));
  const lostFlags = load.acknowledged.flags.filter((f) => !flags.has(`${f.postId}/${f.agentId}`)).length;
  const [twicePosts] = await em.execute<{ n: number }[]>(
    'select count(*)::int as n from (select body from post group by body having count(*) > 1) d',
  );
  const [twiceCommands] = await em.execute<{ n: number }[]>(
    'select count(*)::int as n from (select command_id from outbox_event group by command_id, type, subject_id having count(*) > 1) d',
  );
  const [gaps] = await em.execute<{ n: number }[]>(
    'select count(*)::int as n from (select event_id, lag(event_id) over (order by event_id) as previous from ledger_event) e where e.event_id <> coalesce(e.previous, 0) + 1',
  );
  let unpublished = -1;
  for (let i = 0; i < 300; i++) {
    const [row] = await em.execute<{ n: number }[]>('select count(*)::int as n from outbox_event where published_at is null');
    unpublished = row?.n ?? 0;
    if (unpublished === 0) break;
    await pause(100);
  }
  return {
    lost: lostPosts + lostVotes + lostFollows + lostFlags,
    appliedTwice: (twicePosts?.n ?? 0) + (twiceCommands?.n ?? 0),
    ledgerGaps: gaps?.n ?? 0,
    unpublished,
  };
}

/** Runs the scenario; 0 when every check holds. */
export async function runScenario(scenario: Scenario): Promise<number> {
  const { base, seconds, clients } = scenario;
  const watch = scenario.prometheusUrl ? new AlertWatch(scenario.prometheusUrl) : null;
  watch?.start();
  const client = new Client(base);
  const agents: LoadAgent[] = [];
  for (let i = 0; i < clients; i++) {
    const agent = await registerAgent(client);
    agents.push({ agentId: agent.agentId, token: agent.token });
  }
  const owner = await registerAgent(client);
  const topics: { projectSlug: string; topicSlug: string }[] = [];
  for (let i = 0; i < 6; i++) {
    const { projectSlug, topicSlug } = await createTopic(client, owner, await createProject(client, owner));
    topics.push({ projectSlug, topicSlug });
  }

  const load = new WriteLoad(base);
  const span = seconds * 1000;
  const faults = scenario.faults.map((f) => ({ ...f, at: f.at * span }));
  const injected: { name: string; at: number; wallAt: number }[] = [];
  const chaos = (async () => {
    for (const fault of faults) {
      await pause(Math.max(0, fault.at - load.now()));
      injected.push({ name: fault.name, at: load.now(), wallAt: Date.now() });
      await fault.inject();
    }
  })();
  await Promise.all([...agents.map((agent) => load.run(agent, topics, span)), chaos]);

  const orm = await openOrm(scenario.databaseUrl, { poolMax: 2 });
  const result = await checks(orm, load);
  await orm.close();
  const failed = await failedJobs(scenario.redis);
  // Asked after the checks, so an alert whose `for:` ends while the outbox drains is counted for its fault.
  await watch?.stop();
  const quiet = watch?.between(0, injected[0]?.wallAt ?? Infinity) ?? [];
  const alerts = watch
    ? injected.map((fault, i) =>
        faultAlerts(
          fault.name,
          faults[i]?.pages ?? [],
          watch.between(fault.wallAt, injected[i + 1]?.wallAt ?? Infinity),
          watch.stillFiring(fault.wallAt, injected[i + 1]?.wallAt ?? Infinity),
        ),
      )
    : [];
  const projects = topics.map((topic) => topic.projectSlug);
  // The steady state: from a second in (connections warm) to the first fault. A fault's window is compared with it
  // as the longest of two samples of the same jitter, whose difference grows with the jitter itself: with no fault
  // at all they differ by tens of ms where the steady gap is 250 ms, and by about 200 where it is 600 (a slower
  // machine: etcd's leader, bound 0, measured 824 against a steady 611 there, its longest gap nowhere near the kill).
  // So a fault may exceed the steady gap plus its bound by half the steady gap, and by at least 100 ms.
  const steadyGap = longestGap(load.counters.successes, projects, 1000, injected[0]?.at ?? span).ms;
  const jitterMs = Math.max(100, Math.round(steadyGap / 2));
  const recovery = injected.map((fault, i) => {
    const first = load.counters.successes.filter((s) => s.sentAt >= fault.at).reduce((min, s) => Math.min(min, s.doneAt), Infinity);
    const gap = longestGap(load.counters.successes, projects, fault.at, injected[i + 1]?.at ?? span);
    const bound = faults[i]?.maxGapMs;
    return {
      fault: fault.name,
      recoveredMs: Number.isFinite(first) ? first - fault.at : null,
      gap: gap.ms,
      // Where in the fault's window its longest gap began: at once is the fault's doing, later may be the machine's.
      gapStartedMs: gap.startedAt - fault.at,
      bound,
      ok: bound === undefined || gap.ms <= bound + steadyGap + jitterMs,
    };
  });
  const unhandled = scenario.processes.reduce((n, p) => n + p.unhandledErrors, 0);
  const exits = scenario.processes.reduce((n, p) => n + p.unexpectedExits, 0);

  const c = load.counters;
  console.log(`\nchaos: ${seconds}s of writes by ${clients} clients, ${scenario.setting}`);
  console.log(`steady state before the first fault: the longest any project went without an acknowledged write was ${steadyGap} ms`);
  console.log(
    `| fault | longest gap (ms) | it began (ms after the fault) | bound (ms, beyond the steady state, + ${jitterMs} ms of jitter) | first write sent after it acknowledged (ms) | ok |\n|---|---|---|---|---|---|`,
  );
  for (const r of recovery)
    console.log(`| ${r.fault} | ${r.gap} | ${r.gapStartedMs} | ${r.bound ?? '-'} | ${r.recoveredMs ?? 'never'} | ${r.ok ? 'yes' : 'NO'} |`);
  if (watch) printAlertTable(quiet, alerts, watch);
  const rows: [string, number, boolean][] = [
    ['requests', c.requests, true],
    ['acknowledged writes', c.acknowledged, c.acknowledged > 0],
    [
      `refused (definite 4xx: ${
        Object.entries(c.refusals)
          .map(([code, n]) => `${code} ${n}`)
          .join(', ') || 'none'
      })`,
      c.refused,
      true,
    ],
    ['503 answers (retried)', c.unavailable, true],
    ['writes given up after 60 s', c.gaveUp, c.gaveUp === 0],
    ['lost', result.lost, result.lost === 0],
    ['applied twice', result.appliedTwice, result.appliedTwice === 0],
    ['500s', c.serverErrors, c.serverErrors === 0],
    ['failed jobs (out of attempts)', failed, failed === 0],
    ['ledger gaps', result.ledgerGaps, result.ledgerGaps === 0],
    ['outbox left unpublished', result.unpublished, result.unpublished === 0],
    ['unhandled Redis error events', unhandled, unhandled === 0],
    ['process exits the suite did not cause', exits, exits === 0],
    ['faults never recovered from', recovery.filter((r) => r.recoveredMs === null).length, recovery.every((r) => r.recoveredMs !== null)],
    // CHAOS_BOUNDS=report prints the bounds' verdicts without failing on them: for a machine loaded by other work (docs/scaling.md).
    [
      'faults with a gap over their bound',
      recovery.filter((r) => !r.ok).length,
      process.env.CHAOS_BOUNDS === 'report' || recovery.every((r) => r.ok),
    ],
    ...alertRows(watch !== null, quiet.filter((s) => s.fired).length, alerts),
  ];
  console.log('\n| check | value | ok |\n|---|---|---|');
  for (const [name, value, ok] of rows) console.log(`| ${name} | ${value} | ${ok ? 'yes' : 'NO'} |`);
  const passed = rows.every(([, , ok]) => ok);
  console.log(passed ? '\nchaos: every check holds' : '\nchaos: FAILED');
  return passed ? 0 : 1;
}

/**
 * The alert checks, with a Prometheus (its rules' `for:` compressed 60×, scripts/topology/monitoring.ts): none
 * fires while nothing is wrong, and each fault pages every alert it should. Under CHAOS_BOUNDS=report (a loaded
 * machine) the second is printed, not failed, as the gap bounds are.
 */
function alertRows(watched: boolean, firedWhenQuiet: number, alerts: ReturnType<typeof faultAlerts>[]): [string, number, boolean][] {
  if (!watched) return [];
  const silent = alerts.filter((a) => a.pages.some((name) => !a.fired.includes(name) && !a.stillFiring.includes(name))).length;
  return [
    ['alerts fired in the quiet stretch before the first fault', firedWhenQuiet, firedWhenQuiet === 0],
    ['faults that did not page every alert they should', silent, process.env.CHAOS_BOUNDS === 'report' || silent === 0],
  ];
}
