import { raw } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { openOrm, type Orm } from '../../src/db/orm.ts';

let orm: Orm;

beforeAll(async () => {
  orm = await openOrm(inject('databaseUrl'), { poolMax: 1 });
});
afterAll(async () => {
  await orm.close();
});

const one = async <R>(sql: string, params: unknown[] = []): Promise<R> => ((await orm.em.fork().execute(sql, params)) as R[])[0] as R;

describe('a statement of MikroORM’s', () => {
  it('reaches Postgres with its value apart from its text', async () => {
    const row = await one<{ query: string }>("select query from pg_stat_activity where pid = pg_backend_pid() and ? <> ''", [
      'private-value',
    ]);
    expect(row.query).toContain('$1');
    expect(row.query).not.toContain('private-value');
  });

  it('binds each item of a list as a value of its own', async () => {
    const row = await one<{ n: number }>("select count(*)::int as n from (values ('a'), ('b'), ('c')) v(x) where x in (?)", [['a', 'c']]);
    expect(row.n).toBe(2);
  });

  it('quotes an identifier in place and leaves an escaped question mark to Postgres', async () => {
    const row = await one<{ answer: boolean }>('select \'{"a": 1}\'::jsonb \\? ? as ??', ['a', 'answer']);
    expect(row.answer).toBe(true);
  });

  it('sends an object as its JSON text', async () => {
    const row = await one<{ doc: unknown }>('select ?::jsonb as doc', [{ a: [1, 'x'] }]);
    expect(row.doc).toEqual({ a: [1, 'x'] });
  });

  it('binds the values of a raw fragment among the statement’s own', async () => {
    const row = await one<{ joined: string }>('select ? || ? as joined', ['a', raw('lower(?)', ['BC'])]);
    expect(row.joined).toBe('abc');
  });
});
