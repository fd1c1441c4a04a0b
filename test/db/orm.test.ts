import { describe, expect, inject, it } from 'vitest';
import { openOrm } from '../../src/db/orm.ts';
import { TcpProxy, targetOf } from '../support/tcpProxy.ts';

describe('the database pool', () => {
  it('gets back the connection of a transaction cut off by an outage, so the pool neither leaks nor hangs on close', async () => {
    const proxy = new TcpProxy(targetOf(inject('databaseUrl'), 5432));
    await proxy.open();
    const orm = await openOrm(proxy.url(inject('databaseUrl')), { poolMax: 2 });
    const failures: string[] = [];
    const transactions = (async () => {
      for (let i = 0; i < 20; i++) {
        await orm.em
          .fork()
          .transactional(async (em) => {
            await em.execute('select pg_sleep(0.05)');
            await em.execute('select 1');
          })
          .catch((error: Error) => failures.push(error.message));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 120));
    await proxy.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await proxy.open();
    await transactions;
    expect(failures.length).toBeGreaterThan(0);
    // With two slots, a leaked connection per cut transaction would leave none for this.
    await expect(orm.em.fork().execute('select 1 as one')).resolves.toEqual([{ one: 1 }]);
    const closed = await Promise.race([orm.close().then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('hung'), 5000))]);
    expect(closed).toBe('closed');
    await proxy.close();
  });
});
