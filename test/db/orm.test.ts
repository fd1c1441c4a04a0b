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
    // Both pool slots in a transaction that has run a statement and is running another when the outage comes.
    const cut = Array.from({ length: 2 }, () => {
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const outcome = orm.em
        .fork()
        .transactional(async (em) => {
          await em.execute('select 1');
          entered();
          await em.execute('select pg_sleep(2)');
        })
        .then(
          () => 'committed',
          (error: Error) => error.message,
        );
      return { inside, outcome };
    });
    await within(Promise.all(cut.map((c) => c.inside)), 10_000, 'starting the transactions');
    await proxy.close();
    const outcomes = await within(Promise.all(cut.map((c) => c.outcome)), 10_000, 'the cut transactions');
    expect(outcomes).not.toContain('committed');
    await proxy.open();
    // With two slots, a leaked connection per cut transaction would leave none for this.
    await expect(within(orm.em.fork().execute('select 1 as one'), 10_000, 'a statement after the outage')).resolves.toEqual([{ one: 1 }]);
    await expect(within(orm.close(), 5000, 'closing the pool')).resolves.toBeUndefined();
    await proxy.close();
  });
});
