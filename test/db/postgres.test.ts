import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { inject } from 'vitest';
import { run, transaction } from '../../src/db/postgres.ts';
import { openOrm, type Orm } from '../../src/db/orm.ts';
import { statement } from '../../src/db/statements.ts';
import { unique } from '../support/client.ts';

let orm: Orm;
const table = unique('bound_')
  .replace(/[^a-z0-9_]/gi, '_')
  .toLowerCase();

beforeAll(async () => {
  orm = await openOrm(inject('databaseUrl'), { poolMax: 2 });
  await orm.em.fork().execute(`create table ${table} (id text primary key, body text not null, at timestamptz)`);
});
afterAll(async () => {
  await orm.em.fork().execute(`drop table if exists ${table}`);
  await orm.close();
});

const insert = (id: string, body: string, at: Date | null = null) =>
  statement(`insert into ${table} (id, body, at) values (?, ?, ?)`, [id, body, at]);
/** The rows stored under an id, each timestamp as an ISO string. */
async function rowsOf(id: string): Promise<{ body: string; at: string | null }[]> {
  const rows = await orm.em.fork().execute<{ body: string; at: string | null }[]>(`select body, at from ${table} where id = ?`, [id]);
  return rows.map(({ body, at }) => ({ body, at: at === null ? null : new Date(at).toISOString() }));
}

describe('statements with bound parameters, in transactions of few round trips', () => {
  it('commits the writes sent with commit, every parameter arriving as it was sent', async () => {
    const body = `it's a "quote", a back\\slash, \\' both, ünïcödé, emoji 🚀, a ? mark and $1`;
    const at = new Date('2026-11-25T10:11:12.345Z');
    await transaction(orm.em, async () => ({ commit: [insert('literal', body, at)], result: null }));
    expect(await rowsOf('literal')).toEqual([{ body, at: at.toISOString() }]);
  });

  it('lets a later trip read what an earlier trip of the same transaction wrote, before anyone else can', async () => {
    const seen = await transaction(orm.em, async (trips) => {
      await trips.send([insert('own-write', 'first')]);
      const outside = await rowsOf('own-write');
      const [rows] = await trips.send([statement(`select body from ${table} where id = ?`, ['own-write'])]);
      return { commit: [], result: { inside: rows, outside } };
    });
    expect(seen).toEqual({ inside: [{ body: 'first' }], outside: [] });
    expect(await rowsOf('own-write')).toEqual([{ body: 'first', at: null }]);
  });

  it('leaves nothing behind when it ends in a rollback', async () => {
    await transaction(orm.em, async (trips) => {
      await trips.send([insert('rolled-back', 'gone')]);
      return { rollback: true, result: null };
    });
    expect(await rowsOf('rolled-back')).toEqual([]);
  });

  it("rolls back every statement when one fails, throws MikroORM's exception for it, and the pool serves the next transaction", async () => {
    await transaction(orm.em, async () => ({ commit: [insert('taken', 'one')], result: null }));
    const failing = transaction(orm.em, async (trips) => {
      await trips.send([insert('before-the-failure', 'x')]);
      return { commit: [insert('taken', 'two')], result: null };
    });
    await expect(failing).rejects.toBeInstanceOf(UniqueConstraintViolationException);
    expect(await rowsOf('before-the-failure')).toEqual([]);
    expect(await rowsOf('taken')).toEqual([{ body: 'one', at: null }]);
    // Both of the pool's two connections, and then some: a connection left mid-transaction would fail here.
    for (let i = 0; i < 3; i++) await transaction(orm.em, async () => ({ commit: [insert(`after-${i}`, 'ok')], result: null }));
    expect(await rowsOf('after-2')).toEqual([{ body: 'ok', at: null }]);
  });

  it('sends numbers, negative ones after a minus sign included, bigints, booleans and lists as the values they are', async () => {
    const results = await transaction(orm.em, async (trips) => ({
      commit: [],
      result: await trips.send([
        statement('select 10-? as difference, ?::bigint as big, ?::boolean as yes, ?::numeric as fraction, ?::text[] as list', [
          -5,
          9007199254740993n,
          true,
          0.25,
          ['a"b', 'c\\d', 'e,f', ''],
        ]),
      ]),
    }));
    expect(results[0]?.[0]).toEqual({
      difference: 15,
      big: '9007199254740993',
      yes: true,
      fraction: '0.25',
      list: ['a"b', 'c\\d', 'e,f', ''],
    });
  });

  it('runs a statement alone on the transaction of the unit of work it is given', async () => {
    await orm.em.fork().transactional(async (em) => {
      await run(em, insert('inside-unit-of-work', 'seen'));
      expect(await run(em, statement(`select body from ${table} where id = ?`, ['inside-unit-of-work']))).toEqual([{ body: 'seen' }]);
      expect(await rowsOf('inside-unit-of-work')).toEqual([]);
    });
    expect(await rowsOf('inside-unit-of-work')).toEqual([{ body: 'seen', at: null }]);
  });

  it('refuses a statement whose placeholders and parameters do not match, sending nothing', async () => {
    const mismatched = transaction(orm.em, async () => ({
      commit: [statement(`insert into ${table} (id, body) values (?, ?)`, ['only-one'])],
      result: null,
    }));
    await expect(mismatched).rejects.toThrow('2 placeholders for 1 parameters');
    expect(await rowsOf('only-one')).toEqual([]);
  });
});

describe('a statement run alone, outside a transaction', () => {
  let single: Orm;
  beforeAll(async () => {
    // One connection, so every statement below meets the statements prepared before it.
    single = await openOrm(inject('databaseUrl'), { poolMax: 1 });
  });
  afterAll(async () => {
    await single.close();
  });

  it('is prepared once on its connection and then executed by name, planned no more on every run', async () => {
    const select = statement(`select body from ${table} where id = ? and body <> ?`, ['prepared', 'x']);
    await run(single.em.fork(), insert('prepared', 'planned once'));
    for (let i = 0; i < 3; i++) expect(await run(single.em.fork(), select)).toEqual([{ body: 'planned once' }]);
    const [prepared] = await run<{ runs: number }>(
      single.em.fork(),
      statement('select (generic_plans + custom_plans)::int as runs from pg_prepared_statements where statement = ?', [
        `select body from ${table} where id = $1 and body <> $2`,
      ]),
    );
    expect(prepared?.runs).toBe(3);
  });

  it('keeps answering when a migration changes the table under a prepared select *', async () => {
    const scratch = `${table}_migrated`;
    await single.em.fork().execute(`create table ${scratch} (id text primary key)`);
    await single.em.fork().execute(`insert into ${scratch} values ('row')`);
    const select = statement(`select * from ${scratch} where id = ?`, ['row']);
    expect(await run(single.em.fork(), select)).toEqual([{ id: 'row' }]);
    await single.em.fork().execute(`alter table ${scratch} add column note text default 'added'`);
    expect(await run(single.em.fork(), select)).toEqual([{ id: 'row', note: 'added' }]);
    await single.em.fork().execute(`drop table ${scratch}`);
  });
});

describe("a transaction's statements, prepared on their connection", () => {
  const grown = `${table}_grown`;
  beforeAll(async () => {
    await orm.em.fork().execute(`create table ${grown} (id text primary key, pad text)`);
    await orm.em.fork().execute(`insert into ${grown} values ('first', 'x')`);
    // As autovacuum finds a new database's tables: one row, a page.
    await orm.em.fork().execute(`analyze ${grown}`);
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await orm.em.fork().execute(`drop table if exists ${grown}`);
  });

  const select = statement(`select pad from ${grown} where id = any(?::text[])`, [['first']]);
  const selectText = `select pad from ${grown} where id = any($1::text[])`;
  /** One connection, so every transaction meets the plans the ones before it cached. */
  const oneConnection = () => openOrm(inject('databaseUrl'), { poolMax: 1 });
  const readIn = (single: Orm) => transaction(single.em, async (trips) => ({ commit: [], result: (await trips.send([select]))[0] }));
  /** The generic plan the connection keeps for the prepared statement now (EXPLAIN EXECUTE on that same connection, as a transaction runs it). */
  async function cachedPlan(single: Orm): Promise<string> {
    const [prepared] = await run<{ name: string }>(
      single.em.fork(),
      statement('select name from pg_prepared_statements where statement = ?', [selectText]),
    );
    return single.em.fork().transactional(async (em) => {
      await em.execute('set local plan_cache_mode = force_generic_plan');
      const rows = await em.execute<{ 'QUERY PLAN': string }[]>(`explain execute ${prepared?.name}('{first}')`);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
  }

  it('are prepared once and run by one generic plan, neither parsed nor planned again on every run', async () => {
    const single = await oneConnection();
    for (let i = 0; i < 3; i++) expect(await readIn(single)).toEqual([{ pad: 'x' }]);
    const [prepared] = await run<{ generic: number; custom: number }>(
      single.em.fork(),
      statement('select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where statement = ?', [
        selectText,
      ]),
    );
    expect(prepared).toEqual({ generic: 3, custom: 0 });
    await single.close();
  });

  it('are prepared afresh on another connection after a migration changes a table under a prepared select *', async () => {
    const single = await oneConnection();
    const scratch = `${table}_reshaped`;
    await orm.em.fork().execute(`create table ${scratch} (id text primary key)`);
    await orm.em.fork().execute(`insert into ${scratch} values ('row')`);
    const selectAll = statement(`select * from ${scratch} where id = ?`, ['row']);
    const readAll = () => transaction(single.em, async (trips) => ({ commit: [], result: (await trips.send([selectAll]))[0] }));
    expect(await readAll()).toEqual([{ id: 'row' }]);
    await orm.em.fork().execute(`alter table ${scratch} add column note text default 'added'`);
    // The attempt that meets the stale statement fails (a batch then goes command by command); the next one is answered.
    await expect(readAll()).rejects.toThrow(/cached plan must not change result type/);
    expect(await readAll()).toEqual([{ id: 'row', note: 'added' }]);
    await orm.em.fork().execute(`drop table ${scratch}`);
    await single.close();
  });

  it("are planned again at the tables' sizes after half a second, then twice as long each time, up to ten seconds", async () => {
    // Faked before the connection's first transaction: its plans' age is read on this clock.
    vi.useFakeTimers({ toFake: ['performance'] });
    const single = await oneConnection();
    const planAfter = async (ms: number) => {
      vi.advanceTimersByTime(ms);
      await readIn(single);
      return (await cachedPlan(single)).match(/Seq Scan|Index (Only )?Scan/)?.[0].replace('Only ', '');
    };
    const grow = () => orm.em.fork().execute(`insert into ${grown} select 'row-' || i, repeat('x', 100) from generate_series(1, 20000) i`);
    const shrink = async () => {
      await orm.em.fork().execute(`truncate ${grown}`);
      await orm.em.fork().execute(`insert into ${grown} values ('first', 'x')`);
      await orm.em.fork().execute(`analyze ${grown}`);
    };
    // The generic plan, made while the table holds one row: a sequential scan. Inserts leave it cached.
    expect(await planAfter(0)).toBe('Seq Scan');
    await grow();
    expect(await planAfter(499)).toBe('Seq Scan');
    expect(await planAfter(1)).toBe('Index Scan');
    // The table emptied, Postgres plans it again at once, a sequential scan: the second
    // generation of plans, begun at half a second, lives a second.
    await shrink();
    expect(await planAfter(0)).toBe('Seq Scan');
    await grow();
    expect(await planAfter(999)).toBe('Seq Scan');
    expect(await planAfter(1)).toBe('Index Scan');
    // Then 2, 4 and 8 seconds; from then on ten.
    for (const lifetime of [2000, 4000, 8000]) await planAfter(lifetime);
    await shrink();
    expect(await planAfter(0)).toBe('Seq Scan');
    await grow();
    expect(await planAfter(9_999)).toBe('Seq Scan');
    expect(await planAfter(1)).toBe('Index Scan');
    await single.close();
  });
});
