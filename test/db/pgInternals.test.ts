import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { openOrm, type Orm } from '../../src/db/orm.ts';
import { sentTogether } from '../../src/db/pgInternals.ts';

/** A client of the ORM's pool as pg builds it, with the socket sentTogether corks. */
interface PoolClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  release(): void;
  connection: { stream: { writableLength: number } };
}

let orm: Orm;
let client: PoolClient;

beforeAll(async () => {
  orm = await openOrm(inject('databaseUrl'), { poolMax: 1 });
  const pool = (await orm.em.getConnection('write').getNativeClient()) as unknown as { connect(): Promise<PoolClient> };
  client = await pool.connect();
});
afterAll(async () => {
  client?.release();
  await orm?.close();
});

describe('the installed pg, as sentTogether reaches it', () => {
  it('writes each statement a pipelined client is handed to its connection’s socket at once, held there while corked', async () => {
    let held = 0;
    const answers = sentTogether(client, () => {
      const sent = [client.query('select $1::int as one', [1]), client.query('select $1::int as two', [2])];
      held = client.connection.stream.writableLength;
      return sent;
    });
    expect(held).toBeGreaterThan(0);
    expect((await Promise.all(answers)).map((answer) => answer.rows[0])).toEqual([{ one: 1 }, { two: 2 }]);
  });
});
