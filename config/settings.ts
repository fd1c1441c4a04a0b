import Joi from 'joi';

/**
 * One typed settings object, read from the environment and validated at start.
 * Names and defaults of the first block are fixed by contract.md; the rest are
 * operational knobs of this implementation, documented in README.md.
 */
export interface Settings {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string;
  /** Seed nodes of a Redis Cluster; when any are set, every connection is a cluster connection and redisUrl is unused. */
  redisClusterNodes: { host: string; port: number }[];
  relayOperatorFingerprints: string[];
  accountsLinkSecret: string | null;
  rateLimitScale: number;
  /** Namespace of every Redis key and BullMQ queue, so deployments (and test runs) can share one Redis. */
  redisPrefix: string;
  /** How many of the MAX_PARTITIONS queues this API spreads projects over; a project always maps to the same one. */
  partitions: number;
  /** How long an HTTP request waits for its command's result before answering 503. */
  commandTimeoutMs: number;
  /** After a loaded cycle is answered, how long at most the lanes' next batches wait for its clients (src/pipeline/sendCycle.ts). */
  batchLingerMs: number;
  /**
   * BullMQ job lock, renewed while the job runs; a worker that dies mid-job loses it after this long and
   * another worker takes the job (workers/commandWorkers.ts).
   */
  workerLockMs: number;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  /** pino's levels; `silent` logs nothing. */
  logLevel: LogLevel;
  /**
   * Credential for the operator surfaces (/admin/queues, /metrics, /queuez):
   * HTTP Basic with any user name, or Bearer. Unset: those surfaces refuse everyone.
   */
  operatorToken: string | null;
  /** Port of a worker-only process's /metrics listener (0: any free port). */
  metricsPort: number;
  /** Projects /metrics names in its per-project series (the busiest); the rest are summed as project="(other)". */
  metricsTopProjects: number;
  /** How often a worker deletes command results and spent nonces past the 24 h retry window. */
  pruneIntervalMs: number;
  /**
   * After SIGTERM the API answers /readyz 503 at once but keeps serving this
   * long, so a load balancer stops sending before the listener closes.
   */
  drainGraceMs: number;
  /**
   * Streaming replicas that serve reads (see src/db/replicas.ts); empty: every
   * query goes to DATABASE_URL. Set it on workers too: they record commit
   * positions only when it is set.
   */
  databaseReplicaUrls: string[];
  /** A replica further behind the primary than this is skipped until it catches up. */
  replicaMaxLagMs: number;
  /** Bytes of rendered read bodies each API process keeps (src/http/renderedReads.ts); 0: none. */
  readCacheBytes: number;
  /** The event stream's keep-alive: a comment line on every open stream this often, so proxies keep an idle stream open. */
  streamHeartbeatMs: number;
  /** Bytes one event stream may hold for a client that reads slower than events arrive; past it the stream is closed (the client resumes). */
  streamBufferBytes: number;
  /** Event streams one API process holds at most (per agent and per source address: quotas.ts, scaled by RATE_LIMIT_SCALE). */
  streamMaxPerProcess: number;
  /** How often an API process with open streams compares the ledger head in Postgres with what it fanned out (lost announcements). */
  streamCatchUpMs: number;
  /** How long a ledger head may stay above the announced one before a worker's publisher announces it itself (workers/ledgerPublisher.ts). */
  ledgerAnnounceGraceMs: number;
}

/**
 * Every worker process serves this many partition queues, whatever an API's
 * PARTITIONS (at most this many) says: see src/pipeline/partitions.ts.
 */
export const MAX_PARTITIONS = 32;

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof logLevels)[number];

const schema = Joi.object({
  PORT: Joi.number().integer().min(0).max(65535).default(8080),
  HOST: Joi.string().default('0.0.0.0'),
  DATABASE_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .default('postgres://postgres@127.0.0.1:5432/forum'),
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER_NODES: Joi.string()
    .pattern(/^\s*[^\s,:]+:\d{1,5}\s*(,\s*[^\s,:]+:\d{1,5}\s*)*$/)
    .allow('')
    .default(''),
  RELAY_OPERATOR_FINGERPRINTS: Joi.string().allow('').default(''),
  ACCOUNTS_LINK_SECRET: Joi.string().min(16).allow(''),
  RATE_LIMIT_SCALE: Joi.number().positive().default(1),
  REDIS_PREFIX: Joi.string()
    .pattern(/^[a-zA-Z0-9_-]+$/)
    .default('agora'),
  PARTITIONS: Joi.number().integer().min(1).max(MAX_PARTITIONS).default(2),
  COMMAND_TIMEOUT_MS: Joi.number().integer().min(100).default(10_000),
  BATCH_LINGER_MS: Joi.number().integer().min(0).max(1000).default(30),
  WORKER_LOCK_MS: Joi.number().integer().min(500).default(1000),
  MAX_BODY_BYTES: Joi.number().integer().min(1024).default(65_536),
  LOG_LEVEL: Joi.string()
    .valid(...logLevels)
    .default('info'),
  OPERATOR_TOKEN: Joi.string().min(16).max(256).allow(''),
  METRICS_PORT: Joi.number().integer().min(0).max(65535).default(9091),
  METRICS_TOP_PROJECTS: Joi.number().integer().min(0).max(1000).default(20),
  PRUNE_INTERVAL_MS: Joi.number().integer().min(1000).default(3_600_000),
  DRAIN_GRACE_MS: Joi.number().integer().min(0).max(120_000).default(5000),
  DATABASE_REPLICA_URLS: Joi.string()
    .allow('')
    .default('')
    .custom((value: string, helpers) => {
      for (const url of splitList(value)) {
        if (
          Joi.string()
            .uri({ scheme: ['postgres', 'postgresql'] })
            .validate(url).error
        )
          return helpers.message({ custom: `"${url}" is not a postgres:// URL` });
      }
      return value;
    }),
  // At most a minute: commit positions live 5 minutes in Redis (src/store/commitPositions.ts), which must outlast the bound.
  REPLICA_MAX_LAG_MS: Joi.number().integer().min(100).max(60_000).default(5000),
  READ_CACHE_BYTES: Joi.number()
    .integer()
    .min(0)
    .max(4 * 1024 ** 3)
    .default(64 * 1024 ** 2),
  STREAM_HEARTBEAT_MS: Joi.number().integer().min(100).max(300_000).default(15_000),
  STREAM_BUFFER_BYTES: Joi.number().integer().min(65_536).default(1_048_576),
  STREAM_MAX_PER_PROCESS: Joi.number().integer().min(1).default(10_000),
  STREAM_CATCH_UP_MS: Joi.number().integer().min(50).max(60_000).default(1000),
  LEDGER_ANNOUNCE_GRACE_MS: Joi.number().integer().min(10).max(60_000).default(100),
}).unknown(true);

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export class SettingsError extends Error {}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const { value, error } = schema.validate(env, { abortEarly: false });
  if (error) {
    const problems = error.details.map((d) => `${String(d.path[0])}: ${d.message}`).join('; ');
    throw new SettingsError(`Invalid environment settings: ${problems}`);
  }
  const fingerprints = splitList(String(value.RELAY_OPERATOR_FINGERPRINTS));
  return {
    port: value.PORT,
    host: value.HOST,
    databaseUrl: value.DATABASE_URL,
    redisUrl: value.REDIS_URL,
    redisClusterNodes: String(value.REDIS_CLUSTER_NODES)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((node) => {
        const colon = node.lastIndexOf(':');
        return { host: node.slice(0, colon), port: Number(node.slice(colon + 1)) };
      }),
    relayOperatorFingerprints: fingerprints,
    accountsLinkSecret: value.ACCOUNTS_LINK_SECRET ? String(value.ACCOUNTS_LINK_SECRET) : null,
    rateLimitScale: value.RATE_LIMIT_SCALE,
    redisPrefix: value.REDIS_PREFIX,
    partitions: value.PARTITIONS,
    commandTimeoutMs: value.COMMAND_TIMEOUT_MS,
    batchLingerMs: value.BATCH_LINGER_MS,
    workerLockMs: value.WORKER_LOCK_MS,
    maxBodyBytes: value.MAX_BODY_BYTES,
    logLevel: value.LOG_LEVEL,
    operatorToken: value.OPERATOR_TOKEN ? String(value.OPERATOR_TOKEN) : null,
    metricsPort: value.METRICS_PORT,
    metricsTopProjects: value.METRICS_TOP_PROJECTS,
    pruneIntervalMs: value.PRUNE_INTERVAL_MS,
    drainGraceMs: value.DRAIN_GRACE_MS,
    databaseReplicaUrls: splitList(String(value.DATABASE_REPLICA_URLS)),
    replicaMaxLagMs: value.REPLICA_MAX_LAG_MS,
    readCacheBytes: value.READ_CACHE_BYTES,
    streamHeartbeatMs: value.STREAM_HEARTBEAT_MS,
    streamBufferBytes: value.STREAM_BUFFER_BYTES,
    streamMaxPerProcess: value.STREAM_MAX_PER_PROCESS,
    streamCatchUpMs: value.STREAM_CATCH_UP_MS,
    ledgerAnnounceGraceMs: value.LEDGER_ANNOUNCE_GRACE_MS,
  };
}
