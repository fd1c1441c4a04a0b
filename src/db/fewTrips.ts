import type { EntityManager } from '@mikro-orm/postgresql';
import type { Statement } from './statements.ts';

/** The part of a pg pool client used here (pg ships no types of its own). */
interface SimpleQueryClient {
  query(sql: string): Promise<SimpleQueryResult | SimpleQueryResult[]>;
  release(error?: Error): void;
}
interface SimpleQueryResult {
  rows: Record<string, unknown>[];
}
interface ClientPool {
  connect(): Promise<SimpleQueryClient>;
}

export type Row = Record<string, unknown>;

/** A transaction opened by transactionInFewTrips. */
export interface Trips {
  /** Runs the statements in one round trip, in order (the first trip also begins the transaction); each statement's rows. */
  send(statements: Statement[]): Promise<Row[][]>;
}

/** How the transaction ends: the last writes travel with `commit` (an empty list just commits), or it rolls back; `result` is returned either way. */
export type Ending<T> = { commit: Statement[]; result: T } | { rollback: true; result: T };

/**
 * A short transaction in as few round trips as its logic allows, on a
 * connection of the ORM's own pool: `begin` travels with the first
 * statements, the last writes with `commit`, and every trip in between
 * carries several statements in one simple-protocol message. Through the
 * unit of work the same transaction takes a round trip for `begin`, one per
 * statement and one for `commit`; on this service a round trip costs more
 * CPU than most statements (src/db/statements.ts) and, under load, waits
 * for a busy core at each end. For the hot transactions that read, decide in
 * JavaScript, then write: a batch of hot commands, the ledger's publication.
 *
 * Each statement still gets its own snapshot (READ COMMITTED), so a statement
 * sees what committed while an earlier one of the same trip waited for a
 * lock. The simple protocol takes no parameters: they are inlined as literals
 * by escapeLiteral below. On any error the connection is discarded (Postgres
 * rolls the transaction back) and the error thrown as MikroORM's exception
 * for it, as from the unit of work.
 */
export async function transactionInFewTrips<T>(em: EntityManager, work: (trips: Trips) => Promise<Ending<T>>): Promise<T> {
  const driver = em.getDriver();
  let client: SimpleQueryClient;
  try {
    client = await ((await em.getConnection('write').getNativeClient()) as unknown as ClientPool).connect();
  } catch (error) {
    throw driver.convertException(error as Error);
  }
  let begun = false;
  const run = async (statements: string[]): Promise<Row[][]> => {
    let results: SimpleQueryResult | SimpleQueryResult[];
    try {
      results = await client.query(statements.join(';\n'));
    } catch (error) {
      throw driver.convertException(error as Error);
    }
    return (Array.isArray(results) ? results : [results]).map((r) => r.rows);
  };
  try {
    const ending = await work({
      async send(statements) {
        const sql = statements.map(inline);
        if (begun) return run(sql);
        begun = true;
        return (await run(['begin', ...sql])).slice(1);
      },
    });
    if ('rollback' in ending) {
      if (begun) await run(['rollback']);
    } else {
      await run([...(begun ? [] : ['begin']), ...ending.commit.map(inline), 'commit']);
    }
    client.release();
    return ending.result;
  } catch (error) {
    // The connection may be mid-transaction, or gone: the pool must not hand it out again.
    client.release(error as Error);
    throw error;
  }
}

/**
 * A statement with its `?` placeholders replaced by literals. Every `?` is a
 * placeholder here: the `\\?` and `??` forms MikroORM's execute also reads
 * are refused rather than misread.
 */
export function inline({ sql, params }: Statement): string {
  if (sql.includes('??') || sql.includes('\\?')) throw new Error('a statement sent in few trips takes only plain ? placeholders');
  const parts = sql.split('?');
  if (parts.length !== params.length + 1) throw new Error(`statement has ${parts.length - 1} placeholders for ${params.length} parameters`);
  return parts.reduce((text, part, i) => text + literal(params[i - 1]) + part);
}

function literal(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return escapeLiteral(value);
  // Parenthesised, a negative number after a minus sign cannot become a `--` comment.
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') return `(${String(value)})`;
  if (typeof value === 'boolean') return String(value);
  if (value instanceof Date) return escapeLiteral(value.toISOString());
  throw new Error(`no literal for a parameter of type ${typeof value}`);
}

/**
 * A string literal as pg's escapeLiteral writes it (quotes doubled; with a
 * backslash, an E'' literal with backslashes doubled), by regular expression:
 * pg's copies the string one character at a time, which for a batch's JSON
 * (tens of kilobytes) costs more than the round trip it saves.
 */
export function escapeLiteral(text: string): string {
  const quoted = text.replace(/'/g, "''");
  return text.includes('\\') ? ` E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`;
}
