import { describe, expect, inject, it } from 'vitest';
import { openOrm } from '../../src/db/orm.ts';
import { TcpProxy, targetOf } from '../support/tcpProxy.ts';

/** Resolves with the promise's value, or rejects once `ms` pass first: a hang becomes a failure with a name. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('the database pool', () => {
  it('gets back the connection of a transaction cut off by an outage, so the pool neither leaks nor hangs on close', async () => {
    const proxy = new TcpProxy(targetOf(inject('databaseUrl'), 5432));
    await proxy.open();
    const orm = await openOrm(proxy.url(inject('databaseUrl')), { poolMax: 2 });
    // A lock held on a direct connection keeps both transactions waiting inside Postgres until the outage has come.
    const holder = await openOrm(inject('databaseUrl'), { poolMax: 1 });
    const key = 1 + Math.floor(Math.random() * 2_000_000_000);
    await holder.em.fork().execute('select pg_advisory_lock(?)', [key]);
    try {
      // Both pool slots in a transaction that has run a statement and is waiting on another when the outage comes.
      const outcomes = Array.from({ length: 2 }, () =>
        orm.em
          .fork()
          .transactional(async (em) => {
            await em.execute('select 1');
            await em.execute('select pg_advisory_xact_lock(?)', [key]);
          })
          .then(
            () => 'committed',
            (error: Error) => error.message,
          ),
      );
      const waiting = async () => {
        const [row] = await holder.em
          .fork()
          .execute<{ n: string }[]>("select count(*) as n from pg_locks where locktype = 'advisory' and objid = ? and not granted", [key]);
        return Number(row?.n) === 2;
      };
      await within(
        (async () => {
          while (!(await waiting())) await new Promise((resolve) => setTimeout(resolve, 50));
        })(),
        10_000,
        'both transactions waiting on the lock',
      );
      await proxy.close();
      expect(await within(Promise.all(outcomes), 10_000, 'the cut transactions')).not.toContain('committed');
    } finally {
      await holder.em.fork().execute('select pg_advisory_unlock(?)', [key]);
      await holder.close();
    }
    await proxy.open();
    // With two slots, a leaked connection per cut transaction would leave none for this.
    await expect(within(orm.em.fork().execute('select 1 as one'), 10_000, 'a statement after the outage')).resolves.toEqual([{ one: 1 }]);
    await expect(within(orm.close(), 5000, 'closing the pool')).resolves.toBeUndefined();
    await proxy.close();
  });
});
