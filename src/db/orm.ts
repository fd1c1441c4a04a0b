import type { EventEmitter } from 'node:events';
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { BoundPostgreSqlDriver } from './boundConnection.ts';
import { entities } from '../entities/index.ts';
import { migrations } from './migrations/index.ts';

export type Orm = MikroORM;

interface PooledClient extends EventEmitter {
  release?: (error?: Error) => void;
}

/**
 * A transaction whose connection dies (Postgres restarted) fails its
 * ROLLBACK, and Kysely then never returns that client to the pg pool: every
 * outage would leak pool slots until the pool is exhausted and `close()`
 * hangs. A checked-out client whose connection ended is released here
 * (with an error, so the pool discards it), and a later release by its
 * borrower is ignored.
 */
const guardedPools = new WeakSet<EventEmitter>();

async function releaseClientsWhoseConnectionEnded(orm: Orm): Promise<void> {
  // Each reconnect (a database created on start) makes a new pool.
  const pool = (await orm.em.getConnection().getNativeClient()) as unknown as EventEmitter;
  if (guardedPools.has(pool)) return;
  guardedPools.add(pool);
  const checkedOut = new WeakSet<PooledClient>();
  const watched = new WeakSet<PooledClient>();
  pool.on('acquire', (client: PooledClient) => {
    checkedOut.add(client);
    // pg-pool assigns `release` right after emitting 'acquire'.
    queueMicrotask(() => {
      const release = client.release;
      if (!release) return;
      client.release = (error?: Error) => {
        if (checkedOut.has(client)) release(error);
      };
    });
    if (watched.has(client)) return;
    watched.add(client);
    client.on('end', () => {
      if (checkedOut.has(client)) client.release?.(new Error('the database connection ended'));
    });
  });
  pool.on('release', (_error: unknown, client: PooledClient) => checkedOut.delete(client));
}

/** Connection and query timeouts of the pg pool; unset, pg waits as long as the operating system lets it. */
export interface PoolTimeouts {
  connectMs: number;
  queryMs: number;
}

export async function openOrm(databaseUrl: string, options: { poolMax?: number; timeouts?: PoolTimeouts } = {}): Promise<Orm> {
  const { timeouts } = options;
  const orm = await MikroORM.init({
    // Values bound, not formatted into the text: as the port sends them (src/db/boundConnection.ts).
    driver: BoundPostgreSqlDriver,
    clientUrl: databaseUrl,
    // Passed to pg's Pool (and so to each client) through MikroORM's driverOptions. Pipelining changes nothing
    // for the unit of work, which waits for each answer before it sends the next statement; it lets a
    // transaction of src/db/postgres.ts send several statements before waiting once.
    driverOptions: {
      pipeline: true,
      ...(timeouts ? { connectionTimeoutMillis: timeouts.connectMs, query_timeout: timeouts.queryMs } : {}),
    },
    entities,
    extensions: [Migrator],
    // Migrations are listed explicitly so that no file-system discovery depends on the working directory.
    migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, silent: true, snapshot: false },
    pool: { min: 0, max: options.poolMax ?? 10 },
    debug: false,
    allowGlobalContext: false,
    // migrate() creates a missing database itself, tolerating a concurrent creator; not on every connect.
    ensureDatabase: false,
  });
  await releaseClientsWhoseConnectionEnded(orm);
  return orm;
}

/**
 * A fresh Postgres has no `forum` database yet: create it, so `npm start`
 * works on a new machine. Processes starting together race between the
 * existence check and CREATE DATABASE; the loser's 42P04 (duplicate_database,
 * or a unique violation on pg_database when both CREATEs overlap) means the
 * database is there, so it connects to it like the winner.
 */
function createdMeanwhile(error: unknown): boolean {
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  return code === '42P04' || (code === '23505' && constraint === 'pg_database_datname_index');
}

async function ensureDatabase(orm: Orm): Promise<void> {
  const name = orm.config.get('dbName');
  try {
    await orm.schema.ensureDatabase();
  } catch (error) {
    if (!createdMeanwhile(error)) throw error;
    orm.config.set('dbName', name);
    await orm.driver.reconnect();
  }
  await releaseClientsWhoseConnectionEnded(orm);
}

/** Key of the advisory lock that serializes migrations across processes. */
const MIGRATION_LOCK = 7_302_001;

/**
 * Applies pending migrations. Every process migrates on start, so an api
 * and a worker starting together on a fresh database would race; the
 * transaction-scoped advisory lock makes the second wait, then find nothing pending.
 */
export async function migrate(orm: Orm): Promise<void> {
  await ensureDatabase(orm);
  const connection = orm.em.getConnection();
  await connection.transactional(async (trx) => {
    await connection.execute('select pg_advisory_xact_lock(?)', [MIGRATION_LOCK], 'all', trx);
    await orm.migrator.up({ transaction: trx });
  });
}

export async function pendingMigrations(orm: Orm): Promise<number> {
  return (await orm.migrator.getPending()).length;
}
