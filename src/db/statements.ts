import type { EntityManager } from '@mikro-orm/postgresql';
import type { EntityName, RequiredEntityData } from '@mikro-orm/core';
import { run, type Statement } from './postgres.ts';

// The port (postgres.ts) owns the Statement shape, so this file depends on it and never the other way round.
export type { Statement } from './postgres.ts';

/**
 * SQL for the hot path, grouped so that a batch costs a constant number of
 * round trips: on this service a round trip to Postgres costs more CPU (socket
 * write, wake-up, parse and plan) than the work most statements do.
 */
export function statement(sql: string, params: unknown[] = []): Statement {
  return { sql, params };
}

/**
 * `column = ANY_OF` with a list of values as its parameter (pg encodes it as
 * an array): one placeholder whatever the list's length, an empty list
 * matches nothing, and the planner sees the array's size, so it probes the
 * index instead of hashing a whole table.
 */
export const ANY_OF = 'any(?::text[])';

/** A list's values once each, for ANY_OF. */
export function distinct(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * Independent reads as one statement, for a transaction that sends it in a
 * trip (src/db/postgres.ts): its one row has a JSON column per read, each
 * read's rows decoded from JSON (timestamps as ISO strings, numbers as
 * numbers) by splitRead. They share one snapshot, so none may depend on
 * another's result.
 */
export function combinedRead(reads: Record<string, Statement>): Statement {
  const names = Object.keys(reads);
  const columns = names.map((name, i) => `coalesce((select json_agg(r${i}) from (${reads[name]!.sql}) r${i}), '[]'::json) as c${i}`);
  return statement(
    `select ${columns.join(', ')}`,
    names.flatMap((name) => reads[name]!.params),
  );
}

/** combinedRead's row taken apart: each read's rows under its name. */
export function splitRead<K extends string>(reads: Record<K, Statement>, row: Record<string, unknown> | undefined): Record<K, unknown[]> {
  return Object.fromEntries(Object.keys(reads).map((name, i) => [name, (row?.[`c${i}`] as unknown[] | undefined) ?? []])) as Record<
    K,
    unknown[]
  >;
}

/**
 * Independent writes as one statement, data-modifying WITH clauses. They
 * share one snapshot and run in no set order, so no two may touch the same
 * row and none may read what another writes.
 */
export function combinedWrite(writes: Statement[]): Statement {
  if (writes.length === 1) return writes[0] as Statement;
  const clauses = writes.map((w, i) => `w${i} as (${w.sql})`);
  return statement(
    `with ${clauses.join(', ')} select 1`,
    writes.flatMap((w) => w.params),
  );
}

/** Independent writes in one round trip (combinedWrite). */
export async function writeTogether(em: EntityManager, writes: Statement[]): Promise<void> {
  if (writes.length === 0) return;
  await run(em, combinedWrite(writes));
}

/** An entity's stored properties with their column, read once per entity from the ORM's metadata. */
interface Column {
  name: string;
  column: string;
  isDate: boolean;
}
const columnsByEntity = new WeakMap<object, Column[]>();

function columnsOf(em: EntityManager, entity: EntityName<object>): Column[] {
  const meta = em.getMetadata().get(entity);
  let columns = columnsByEntity.get(meta);
  if (!columns) {
    columns = meta.props
      .filter((prop) => prop.fieldNames?.length === 1 && prop.persist !== false)
      .map((prop) => ({ name: prop.name, column: prop.fieldNames[0] as string, isDate: prop.runtimeType === 'Date' }));
    columnsByEntity.set(meta, columns);
  }
  return columns;
}

/**
 * A multi-row insert of entity records as one statement with one parameter:
 * the rows travel as a JSON array and Postgres reads them into the table's
 * own row type, so each value gets its column's type. Give every row the same
 * fields: a column one row leaves out is null there, not its default.
 */
export function insertRows<T extends object>(em: EntityManager, entity: EntityName<T>, rows: readonly RequiredEntityData<T>[]): Statement {
  const table = em.getMetadata().get(entity).tableName;
  const fields = columnsOf(em, entity as EntityName<object>);
  const json = rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (const { name, column } of fields) {
      const value = (row as Record<string, unknown>)[name];
      if (value !== undefined) record[column] = Buffer.isBuffer(value) ? `\\x${value.toString('hex')}` : value;
    }
    return record;
  });
  const columns = [...new Set(json.flatMap((r) => Object.keys(r)))].map((c) => `"${c}"`).join(', ');
  return statement(`insert into "${table}" (${columns}) select ${columns} from json_populate_recordset(null::"${table}", ?::json)`, [
    JSON.stringify(json),
  ]);
}

/**
 * Rows read with combinedRead (JSON, column names) as plain entity records:
 * property names, timestamps as Dates. Plain, not managed: the unit of work
 * never writes them a second time.
 */
export function recordsOf<T extends object>(em: EntityManager, entity: EntityName<T>, rows: readonly unknown[]): T[] {
  const fields = columnsOf(em, entity as EntityName<object>);
  return rows.map((row) => {
    const source = row as Record<string, unknown>;
    const record: Record<string, unknown> = {};
    for (const { name, column, isDate } of fields) {
      const value = source[column];
      if (value !== undefined) record[name] = isDate && typeof value === 'string' ? new Date(value) : value;
    }
    return record as T;
  });
}
