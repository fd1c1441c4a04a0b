import type { EntityManager } from '@mikro-orm/postgresql';
import { CompiledQuery } from 'kysely';
import { sentTogether } from './pgInternals.ts';

/**
 * The one way statements reach Postgres outside the unit of work: with bound
 * parameters (the extended protocol: the text travels with `$n` placeholders
 * and each value apart from it), never inlined as literals. A statement that
 * fails is then logged by Postgres (log_min_error_statement) with its text
 * alone, never with the values it carried (log_parameter_max_length_on_error
 * is 0 by default). Each value is encoded by pg itself (arrays as array
 * literals, Dates as timestamps, Buffers as bytea), and cast where the text
 * says (`?::text[]`).
 *
 * Executed alone (`run`: on the unit of work's transaction when `em` is in
 * one, otherwise as a statement prepared once per pool connection), or as a
 * short transaction whose statements go in a few pipelined round trips
 * (`transaction`).
 */

export type Row = Record<string, unknown>;

/** A statement's text with `?` placeholders and its values in order (src/db/statements.ts builds and groups them). */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** A statement text as this process sends it: `?` placeholders numbered `$1`, `$2`..., and its prepared name, if any. */
interface SentText {
  text: string;
  placeholders: number;
  name: string | undefined;
}

/** Texts kept numbered, by their `?` form: a batch's statements are the same few texts, several kilobytes each. */
const KEPT_TEXTS = 500;
/**
 * Of those, the texts prepared on each pool connection by name (planned once per connection, not parsed and planned on
 * every run): bounded, as every connection keeps each one it was sent.
 */
const PREPARED_TEXTS = 200;
const sentTexts = new Map<string, SentText>();
let preparedTexts = 0;
let preparedCount = 0;

/** `sql` as it is sent, numbered once and named while fewer than PREPARED_TEXTS are. */
function sentText(sql: string): SentText {
  let found = sentTexts.get(sql);
  if (!found) {
    // The `??` and `\?` forms MikroORM's execute also reads are refused rather than misread.
    if (sql.includes('??') || sql.includes('\\?')) throw new Error('a statement takes only plain ? placeholders');
    const parts = sql.split('?');
    found = { text: parts.reduce((text, part, i) => `${text}$${i}${part}`), placeholders: parts.length - 1, name: undefined };
    if (sentTexts.size < KEPT_TEXTS) {
      sentTexts.set(sql, found);
      if (preparedTexts < PREPARED_TEXTS) {
        preparedTexts += 1;
        found.name = `agora_${++preparedCount}`;
      }
    }
  }
  return found;
}

/** The statement as pg takes it: its `?` placeholders numbered `$1`, `$2`... in order, and its prepared name. */
function bound({ sql, params }: Statement): { name: string | undefined; text: string; values: unknown[] } {
  const { name, text, placeholders } = sentText(sql);
  if (placeholders !== params.length) throw new Error(`statement has ${placeholders} placeholders for ${params.length} parameters`);
  return { name, text, values: params };
}

/** What MikroORM's unit of work runs on: the transaction's connection, or the pool. */
interface QueryExecutor {
  executeQuery<R>(query: CompiledQuery<R>): Promise<{ rows: R[] }>;
}

/**
 * One statement, its rows: on `em`'s transaction when it has one (a
 * command's handler), otherwise on a connection of the ORM's pool, prepared
 * by name: an unnamed statement is parsed and planned again on every run,
 * which cost a feed read five times the Postgres CPU (docs/benchmarks.md).
 * Errors are thrown as MikroORM's exception for them, as from the unit of work.
 */
export async function run<R = Row>(em: EntityManager, statement: Statement): Promise<R[]> {
  const { name, text, values } = bound(statement);
  const transaction = em.getTransactionContext<QueryExecutor>();
  try {
    if (transaction) return (await transaction.executeQuery(CompiledQuery.raw(text, values))).rows as R[];
    const pool = (await em.getConnection('write').getNativeClient()) as unknown as NamedPool;
    try {
      return (await pool.query({ name, text, values })).rows as R[];
    } catch (error) {
      // A migration changed a table under a prepared `select *` ("cached plan must not change result type"):
      // the text gets a new name, prepared afresh on each connection.
      const kept = sentTexts.get(statement.sql);
      if ((error as { code?: string }).code !== '0A000' || !kept?.name) throw error;
      kept.name = `agora_${++preparedCount}`;
      return (await pool.query({ name: kept.name, text, values })).rows as R[];
    }
  } catch (error) {
    throw em.getDriver().convertException(error as Error);
  }
}

interface NamedPool {
  query(query: { name?: string; text: string; values: unknown[] }): Promise<{ rows: Row[] }>;
}

/** The part of a pg pool client used here (pg ships no types of its own). */
interface PipelinedClient {
  query(query: { name?: string; text: string; values: unknown[] }): Promise<{ rows: Row[] }>;
  release(error?: Error): void;
}
interface ClientPool {
  connect(): Promise<PipelinedClient>;
}

/** The statements of `transaction` that take no parameter and are never prepared. */
type Keyword = 'begin' | 'set local plan_cache_mode = force_generic_plan' | 'discard plans' | 'commit' | 'rollback';

/**
 * How long a connection keeps the plans it made for its prepared statements. A transaction's statements are run
 * by generic plans (planned once, not per batch: Postgres's own choice kept planning every batch's lookups by a
 * list of ids). A plan made while a table was nearly empty (a new database, the first seconds of a bench) is a
 * sequential scan, which Postgres keeps as the table grows until an ANALYZE: it made a post cost Postgres twice
 * the CPU. Discarded, the plans are made again at the tables' sizes of the moment. A connection's first plans
 * live FIRST_PLAN_LIFETIME_MS, each next generation twice as long as the one before, up to PLAN_LIFETIME_MS: a
 * table that grows from nothing is planned again while it grows, not scanned whole for ten seconds.
 */
const FIRST_PLAN_LIFETIME_MS = 500;
const PLAN_LIFETIME_MS = 10_000;
const plansOf = new WeakMap<object, { madeAt: number; lifetime: number }>();

/** What opens a transaction on `client`: begin, generic plans, and once its plans have lived their lifetime, their discard. */
function openingOf(client: object): Keyword[] {
  const opening: Keyword[] = ['begin', 'set local plan_cache_mode = force_generic_plan'];
  const now = performance.now();
  const plans = plansOf.get(client);
  if (!plans) {
    plansOf.set(client, { madeAt: now, lifetime: FIRST_PLAN_LIFETIME_MS });
    return opening;
  }
  if (now - plans.madeAt < plans.lifetime) return opening;
  plansOf.set(client, { madeAt: now, lifetime: Math.min(PLAN_LIFETIME_MS, plans.lifetime * 2) });
  return [...opening, 'discard plans'];
}

/** A transaction opened by `transaction`. */
export interface Trips {
  /** Sends the statements in one round trip, pipelined, in order (the first trip also begins the transaction); each statement's rows. */
  send(statements: Statement[]): Promise<Row[][]>;
}

/** How the transaction ends: the last writes travel with `commit` (an empty list just commits), or it rolls back; `result` is returned either way. */
export type Ending<T> = { commit: Statement[]; result: T } | { rollback: true; result: T };

/**
 * A short transaction in as few round trips as its logic allows, on a
 * connection of the ORM's pool (whose clients pipeline: src/db/orm.ts):
 * `begin` is sent with the first statements, the last writes with `commit`,
 * and every trip in between sends its statements one after another without
 * waiting for their answers (node-postgres `pipeline: true`), then waits once.
 * Through the unit of work the same transaction takes a round trip for
 * `begin`, one per statement and one for `commit`; on this service a round
 * trip costs more CPU than most statements and, under load, waits for a busy
 * core at each end. For the hot transactions that read, decide in
 * JavaScript, then write: a batch of hot commands, the ledger's publication.
 *
 * Each statement gets its own snapshot (READ COMMITTED), so a statement sees
 * what committed while an earlier one of the same trip waited for a lock. A
 * statement that fails aborts the transaction, and every later one of its
 * trip fails with it (a `commit` among them answers ROLLBACK). On any error
 * the connection is discarded and the first error thrown as MikroORM's
 * exception for it.
 */
export async function transaction<T>(em: EntityManager, work: (trips: Trips) => Promise<Ending<T>>): Promise<T> {
  const driver = em.getDriver();
  let client: PipelinedClient;
  try {
    client = await ((await em.getConnection('write').getNativeClient()) as unknown as ClientPool).connect();
  } catch (error) {
    throw driver.convertException(error as Error);
  }
  const trip = async (statements: (Statement | Keyword)[]): Promise<Row[][]> => {
    // Every statement is checked before the first is sent; each is prepared by name, as `run`'s are: a batch's texts
    // are the same from batch to batch, and parsing and planning them afresh was a third of Postgres's CPU per post.
    const queries = statements.map((statement) => (typeof statement === 'string' ? { text: statement, values: [] } : bound(statement)));
    // The whole trip in one socket write, not one per statement.
    const sent = sentTogether(client, () => queries.map((query) => client.query(query)));
    const answers = await Promise.allSettled(sent);
    const failed = answers.find((answer) => answer.status === 'rejected');
    // The connection is then discarded (below), and with it its prepared statements: a migration that changed a table
    // under one fails this attempt only.
    if (failed) throw driver.convertException(failed.reason as Error);
    return answers.map((answer) => (answer as PromiseFulfilledResult<{ rows: Row[] }>).value.rows);
  };
  const opening = openingOf(client);
  let begun = false;
  try {
    const ending = await work({
      async send(statements) {
        if (begun) return trip(statements);
        begun = true;
        return (await trip([...opening, ...statements])).slice(opening.length);
      },
    });
    if ('rollback' in ending) {
      if (begun) await trip(['rollback']);
    } else {
      await trip([...(begun ? [] : opening), ...ending.commit, 'commit']);
    }
    client.release();
    return ending.result;
  } catch (error) {
    // The connection may be mid-transaction, or gone: the pool must not hand it out again.
    client.release(error as Error);
    throw error;
  }
}
