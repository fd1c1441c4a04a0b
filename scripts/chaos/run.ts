/**
 * One chaos run against a service that is already up (one API, or a
 * balancer in front of several): seed agents and topics, drive the write
 * load, inject the faults on schedule, then check and print the tables.
 */
import { Queue } from 'bullmq';
import { openOrm } from '../../src/db/orm.ts';
import { allPartitionQueueNames, MAX_PARTITIONS } from '../../src/pipeline/partitions.ts';
import { closeRedis, connectRedis, queuePrefix, type RedisTarget } from '../../src/redis.ts';
import { Client, createProject, registerAgent } from '../../test/support/client.ts';
import { createTopic } from '../../test/support/forum.ts';
import { AlertWatch, faultAlerts, printAlertTable } from './alerts.ts';
import { type Acknowledgement, figuresByWindow, JITTER_MS, steadyBaseline, unfitBaseline, WARM_UP_MS, withinBound } from './bounds.ts';
import { type StoreFindings, storeFindings } from './checks.ts';
import { WriteLoad, type LoadAgent } from './load.ts';
import type { ServiceProcess } from './processes.ts';
import { type BoundsMode, boundChecks, type Check, correctnessChecks, type Judged, type JudgedRun, verdict } from './verdict.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Fault {
  /** When, as a fraction of the load's length. */
  at: number;
  name: string;
  inject: () => Promise<void>;
  /**
   * What this fault may add to the longest time a project goes without an acknowledged write, and to any one
   * write's wait, beyond the steady state's (scripts/chaos/bounds.ts). Unset: printed, not judged.
   */
  boundMs?: number;
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
  /**
   * Seconds of the same load before the timed one, then as long again idle, neither judged nor watched for alerts:
   * a cold topology's first writes (connections, JIT, Postgres's caches) took 1.8-2.5 s and raised
   * AgoraApplyLatencyHigh in the quiet stretch, which then judged the start-up, not the steady state.
   */
  warmUpSeconds?: number;
  /** The service's processes, whose output is searched for unhandled Redis error events. */
  processes: ServiceProcess[];
  /** The service's Redis and key prefix, where its failed jobs are counted. */
  redis: RedisTarget & { redisPrefix: string };
  /** The topology's Prometheus: asked which alerts each fault raised. */
  prometheusUrl?: string;
  /** Whether the bound and alert checks fail the run or are only printed (CHAOS_BOUNDS). */
  mode: BoundsMode;
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

/** Runs the scenario; 0 when every enforced check holds. */
export async function runScenario(scenario: Scenario): Promise<number> {
  const { base, seconds, clients } = scenario;
  const watch = scenario.prometheusUrl ? new AlertWatch(scenario.prometheusUrl) : null;
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

  if (scenario.warmUpSeconds) {
    const warmUp = new WriteLoad(base, 'warm-up');
    await Promise.all(agents.map((agent) => warmUp.run(agent, topics, (scenario.warmUpSeconds as number) * 1000)));
    await pause(scenario.warmUpSeconds * 1000);
  }
  watch?.start();
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
  let stores: StoreFindings;
  try {
    stores = await storeFindings(orm, load);
  } finally {
    await orm.close();
  }
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
  const judged = judge(load.counters.successes, projects, faults, injected, span);

  console.log(`\nchaos: ${seconds}s of writes by ${clients} clients, ${scenario.setting}`);
  printFaultTable(judged);
  if (watch) printAlertTable(quiet, alerts, watch);
  const c = load.counters;
  const checks: Check[] = [
    ...correctnessChecks(c, stores, {
      failedJobs: failed,
      unhandledErrors: scenario.processes.reduce((n, p) => n + p.unhandledErrors, 0),
      unexpectedExits: scenario.processes.reduce((n, p) => n + p.unexpectedExits, 0),
    }),
    ...boundChecks(judged),
    ...alertChecks(watch !== null, quiet.filter((s) => s.fired).length, alerts),
  ];
  const { lines, passed } = verdict(checks, scenario.mode);
  console.log(`\n${lines.join('\n')}`);
  return passed ? 0 : 1;
}

/**
 * The steady state (from the warm-up to the first fault) and each fault, judged by scripts/chaos/bounds.ts. With
 * any fault bounded, the steady state is held to a bound of 0: a write that stalls there, with no fault, is a finding.
 */
function judge(
  successes: readonly Acknowledgement[],
  projects: string[],
  faults: Fault[],
  injected: { name: string; at: number }[],
  span: number,
): JudgedRun {
  const baseline = steadyBaseline(successes, projects, injected[0]?.at ?? span);
  const bounded = faults.some((fault) => fault.boundMs !== undefined);
  const figures = figuresByWindow(successes, projects, [WARM_UP_MS, ...injected.map((fault) => fault.at)], span, baseline);
  const windows = [{ name: 'steady state (no fault)', at: WARM_UP_MS }, ...injected].map((window, i): Judged => {
    const bound = i === 0 ? (bounded ? 0 : undefined) : faults[i - 1]?.boundMs;
    const first = successes.filter((s) => s.sentAt >= window.at).reduce((min, s) => Math.min(min, s.doneAt), Infinity);
    const windowFigures = figures[i]!;
    return {
      name: window.name,
      steady: i === 0,
      at: window.at,
      figures: windowFigures,
      bound,
      ok: bound === undefined || withinBound(windowFigures, bound, baseline),
      recoveredMs: i > 0 && Number.isFinite(first) ? first - window.at : null,
    };
  });
  return { baseline, bounded, windows };
}

function printFaultTable({ baseline, bounded, windows }: JudgedRun): void {
  console.log(
    `steady state, ${WARM_UP_MS} ms in to the first fault: the longest any project went without an acknowledged write ` +
      `was ${baseline.gapMs} ms, the slowest write took ${baseline.latencyMs} ms`,
  );
  console.log(
    `each fault may add its bound to both, + ${JITTER_MS} ms of jitter; a gap or write counts against the window in which it began to stall (docs/faults.md)`,
  );
  console.log(
    "| window | longest gap (ms) | it began (ms from the window's start) | slowest write (ms) | it was sent (ms from " +
      "the window's start) | bound (ms) | first write sent after it acknowledged (ms) | ok |",
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const w of windows) {
    const { gap, slowest } = w.figures;
    console.log(
      `| ${w.name} | ${w.figures.gapMs} | ${gap ? gap.startedAt - w.at : '-'} | ${w.figures.latencyMs} | ` +
        `${slowest ? slowest.sentAt - w.at : '-'} | ${w.bound ?? '-'} | ${w.steady ? '-' : (w.recoveredMs ?? 'never')} | ` +
        `${w.ok ? 'yes' : 'NO'} |`,
    );
  }
  // What the slowest write of each fault met, attempt by attempt: where a single write's stall comes from.
  for (const w of windows.slice(1)) {
    const { slowest } = w.figures;
    if (slowest?.attempts)
      console.log(`slowest write of "${w.name}": POST ${slowest.path} (${slowest.projectSlug}): ${slowest.attempts.join(', ')}`);
  }
  const unfit = unfitBaseline(baseline);
  if (bounded && unfit.length > 0)
    console.log(
      '\nchaos: this run is INVALID as a judge of the bounds: the steady state before the first fault is too slow to ' +
        `count them from (${unfit.join(', ')}): a machine this loaded would hide a fault's stall in it`,
    );
}

/**
 * The alert checks, with a Prometheus (its rules' `for:` compressed 60×, scripts/topology/monitoring.ts): none
 * fires while nothing is wrong, and each fault pages every alert it should (a bound check: printed only under
 * CHAOS_BOUNDS=report).
 */
function alertChecks(watched: boolean, firedWhenQuiet: number, alerts: ReturnType<typeof faultAlerts>[]): Check[] {
  if (!watched) return [];
  const silent = alerts.filter((a) => a.pages.some((name) => !a.fired.includes(name) && !a.stillFiring.includes(name))).length;
  return [
    { name: 'alerts fired in the quiet stretch before the first fault', value: firedWhenQuiet, ok: firedWhenQuiet === 0 },
    { name: 'faults that did not page every alert they should', value: silent, ok: silent === 0, bound: true },
  ];
}
