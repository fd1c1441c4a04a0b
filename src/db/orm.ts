import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from '../entities/index.ts';
import { migrations } from './migrations/index.ts';

export type Orm = MikroORM;

export async function openOrm(databaseUrl: string, options: { poolMax?: number } = {}): Promise<Orm> {
  return MikroORM.init({
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    // Migrations are listed explicitly so that no file-system discovery depends on the working directory.
    migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, silent: true, snapshot: false },
    pool: { min: 0, max: options.poolMax ?? 10 },
    debug: false,
    allowGlobalContext: false,
  });
}

/** Key of the advisory lock that serializes migrations across processes. */
const MIGRATION_LOCK = 7_302_001;

/**
 * Applies pending migrations. Every process migrates on start, so an api
 * and a worker starting together on a fresh database would race; the
 * transaction-scoped advisory lock makes the second wait, then find nothing pending.
 */
export async function migrate(orm: Orm): Promise<void> {
  // A fresh Postgres has no `forum` database yet: create it, so `npm start` works on a new machine.
  await orm.schema.ensureDatabase();
  const connection = orm.em.getConnection();
  await connection.transactional(async (trx) => {
    await connection.execute('select pg_advisory_xact_lock(?)', [MIGRATION_LOCK], 'all', trx);
    await orm.migrator.up({ transaction: trx });
  });
}

export async function pendingMigrations(orm: Orm): Promise<number> {
  return (await orm.migrator.getPending()).length;
}
