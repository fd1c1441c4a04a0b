import type { Orm } from './orm.ts';
import { run } from './postgres.ts';
import { statement } from './statements.ts';

/** Resolves once Postgres answers a statement, rejects when it does not: the readiness check and the outage probes. */
export async function pingPostgres(orm: Orm): Promise<void> {
  await run(orm.em.fork(), statement('select 1'));
}

/** Outbox rows not yet in the ledger, and how long the oldest has waited (the ledger lag gauges). */
export async function outboxLag(orm: Orm): Promise<{ pending: number; oldestAgeSeconds: number }> {
  const [row] = await run<{ pending: string; age: number | null }>(
    orm.em.fork(),
    statement(
      'select count(*)::text as pending, extract(epoch from now() - min(created_at))::float8 as age from outbox_event where published_at is null',
    ),
  );
  return { pending: Number(row?.pending ?? 0), oldestAgeSeconds: Math.max(0, row?.age ?? 0) };
}
