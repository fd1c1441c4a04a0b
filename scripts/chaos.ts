/**
 * `npm run chaos`: the fault suite. It starts its own Redis (append-only) and,
 * where it can, its own Postgres cluster; runs the API and two workers as
 * separate processes; drives a write load with retry keys; meanwhile kills
 * workers, kills the API, restarts Redis and restarts Postgres; then checks
 * that nothing acknowledged was lost, nothing applied twice, no 500 was
 * answered, the ledger has no gap and the outbox drained. Exit 0 only then.
 * Loopback only; every process it started is stopped at the end.
 *
 * CHAOS_SECONDS (default 90) sets the load's length; CHAOS_CLIENTS (default 24) its concurrency.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openOrm, type Orm } from '../src/db/orm.ts';
import { Client, createProject, registerAgent } from '../test/support/client.ts';
import { createTopic } from '../test/support/forum.ts';
import { WriteLoad, type LoadAgent } from './chaos/load.ts';
import { ServiceProcess } from './chaos/processes.ts';
import { chaosPostgres, freePort, OwnRedis } from './chaos/services.ts';

const seconds = Number(process.env.CHAOS_SECONDS ?? 90);
const clients = Number(process.env.CHAOS_CLIENTS ?? 24);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const logDir = mkdtempSync(join(tmpdir(), 'agora-chaos-logs-'));

async function waitReady(base: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if ((await fetch(`${base}/readyz`).catch(() => null))?.status === 200) return;
    await pause(100);
  }
  throw new Error('the service did not become ready');
}

interface Fault {
  at: number;
  name: string;
  inject: () => Promise<void>;
}

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
  const [twicePosts] = await em.execute<{ n: number }[]>('select count(*)::int as n from (select body from post group by body having count(*) > 1) d');
  const [twiceCommands] = await em.execute<{ n: number }[]>('select count(*)::int as n from (select command_id from outbox_event group by command_id, type, subject_id having count(*) > 1) d');
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

async function main(): Promise<number> {
  const redis = new OwnRedis(await freePort());
  await redis.start();
  const postgres = await chaosPostgres(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/forum');
  const port = await freePort();
  const env = {
    DATABASE_URL: postgres.url,
    REDIS_URL: redis.url,
    REDIS_PREFIX: 'chaos',
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT_SCALE: '100000',
    LOG_LEVEL: 'warn',
    COMMAND_TIMEOUT_MS: '5000',
    WORKER_LOCK_MS: '2000',
    METRICS_PORT: '0',
  };
  const api = new ServiceProcess('api', env, join(logDir, 'api.log'));
  const workers = [1, 2].map((n) => new ServiceProcess('worker', env, join(logDir, `worker-${n}.log`)));
  const everyone = [api, ...workers];
  emergencyStop = () => {
    for (const service of everyone) service.killNow();
    redis.killNow();
  };
  const base = `http://127.0.0.1:${port}`;
  try {
    api.start();
    await waitReady(base);
    for (const worker of workers) worker.start();
    await pause(1500);

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
    const restartAfter = (service: ServiceProcess, ms: number) => async () => {
      await service.kill();
      await pause(ms);
      service.start();
    };
    const faults: Fault[] = [
      { at: 0.1, name: 'kill worker 1', inject: restartAfter(workers[0] as ServiceProcess, 1000) },
      { at: 0.22, name: 'kill the API', inject: restartAfter(api, 500) },
      { at: 0.36, name: 'restart Redis', inject: () => redis.restart() },
      { at: 0.5, name: `restart Postgres (fast${postgres.kind === 'shared server' ? ': backends terminated' : ''})`, inject: () => postgres.restart('fast') },
      { at: 0.64, name: 'kill worker 2', inject: restartAfter(workers[1] as ServiceProcess, 1000) },
      { at: 0.78, name: `restart Postgres (immediate${postgres.kind === 'shared server' ? ': backends terminated' : ''})`, inject: () => postgres.restart('immediate') },
    ].map((f) => ({ ...f, at: f.at * span }));
    const injected: { name: string; at: number }[] = [];
    const chaos = (async () => {
      for (const fault of faults) {
        await pause(Math.max(0, fault.at - load.now()));
        injected.push({ name: fault.name, at: load.now() });
        await fault.inject();
      }
    })();
    await Promise.all([...agents.map((agent) => load.run(agent, topics, span)), chaos]);

    const orm = await openOrm(postgres.url, { poolMax: 2 });
    const result = await checks(orm, load);
    await orm.close();
    const recovery = injected.map((fault) => {
      const first = load.counters.successes.filter((s) => s.sentAt >= fault.at).reduce((min, s) => Math.min(min, s.doneAt), Infinity);
      return { fault: fault.name, recoveredMs: Number.isFinite(first) ? first - fault.at : null };
    });
    const unhandled = everyone.reduce((n, p) => n + (p.output.match(/Unhandled error event/g)?.length ?? 0), 0);

    const c = load.counters;
    console.log(`\nchaos: ${seconds}s of writes by ${clients} clients, Postgres: ${postgres.kind}, logs in ${logDir}`);
    console.log('| fault | longest time to recover (ms) |\n|---|---|');
    for (const r of recovery) console.log(`| ${r.fault} | ${r.recoveredMs ?? 'never'} |`);
    const rows: [string, number, boolean][] = [
      ['requests', c.requests, true],
      ['acknowledged writes', c.acknowledged, c.acknowledged > 0],
      [`refused (definite 4xx: ${Object.entries(c.refusals).map(([code, n]) => `${code} ${n}`).join(', ') || 'none'})`, c.refused, true],
      ['503 answers (retried)', c.unavailable, true],
      ['writes given up after 60 s', c.gaveUp, c.gaveUp === 0],
      ['lost', result.lost, result.lost === 0],
      ['applied twice', result.appliedTwice, result.appliedTwice === 0],
      ['500s', c.serverErrors, c.serverErrors === 0],
      ['ledger gaps', result.ledgerGaps, result.ledgerGaps === 0],
      ['outbox left unpublished', result.unpublished, result.unpublished === 0],
      ['unhandled Redis error events', unhandled, unhandled === 0],
      ['faults never recovered from', recovery.filter((r) => r.recoveredMs === null).length, recovery.every((r) => r.recoveredMs !== null)],
    ];
    console.log('\n| check | value | ok |\n|---|---|---|');
    for (const [name, value, ok] of rows) console.log(`| ${name} | ${value} | ${ok ? 'yes' : 'NO'} |`);
    const passed = rows.every(([, , ok]) => ok);
    console.log(passed ? '\nchaos: every check holds' : '\nchaos: FAILED');
    return passed ? 0 : 1;
  } finally {
    await Promise.all(everyone.map((p) => p.stop()));
    await redis.stop();
    redis.cleanUp();
    await postgres.stop();
  }
}

/** For the watchdog: kills what was started without waiting. */
let emergencyStop = () => {};

const watchdog = setTimeout(
  () => {
    console.error('chaos: over its time limit; stopping');
    emergencyStop();
    process.exit(2);
  },
  (seconds + 210) * 1000,
).unref();
main().then(
  (code) => {
    clearTimeout(watchdog);
    process.exit(code);
  },
  (error: unknown) => {
    console.error('chaos: could not run:', error);
    process.exit(2);
  },
);
