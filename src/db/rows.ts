import type { EntityManager, QBFilterQuery } from '@mikro-orm/postgresql';
import type { EntityName, QueryOrderMap } from '@mikro-orm/core';
import { run } from './postgres.ts';
import { statement, type Statement } from './statements.ts';

/** How one entity's columns become its properties, worked out once from its metadata. */
interface RowMapping {
  /** A row's record: its columns under their properties' names. */
  record: (row: Record<string, unknown>) => Record<string, unknown>;
  /** Declared numbers that Postgres sends as text (int8, numeric). */
  numbers: string[];
  /** Declared dates that MikroORM's connection leaves as text (it parses them itself when hydrating). */
  dates: string[];
}

const mappings = new Map<string, RowMapping>();

function mappingOf<T extends object>(em: EntityManager, entity: EntityName<T>): RowMapping {
  const meta = em.getMetadata().find(entity);
  if (!meta) throw new Error(`no metadata for ${String(entity)}`);
  let mapping = mappings.get(meta.className);
  if (!mapping) {
    mapping = {
      record: recordOf(meta.props.filter((prop) => prop.fieldNames?.length === 1).map((prop) => [prop.name, prop.fieldNames[0] as string])),
      numbers: meta.props
        .filter((prop) => prop.runtimeType === 'number' && prop.columnTypes.some((type) => type === 'bigint' || type.startsWith('numeric')))
        .map((prop) => prop.name),
      dates: meta.props.filter((prop) => prop.runtimeType === 'Date').map((prop) => prop.name),
    };
    mappings.set(meta.className, mapping);
  }
  return mapping;
}

/**
 * A function that builds a row's record as one object literal, written from
 * the entity's metadata (names quoted by JSON.stringify): every record then
 * has one shape. Copying the columns one by one, as Object.fromEntries or a
 * loop does, was 3-5% of an uncached listing's CPU.
 */
function recordOf(columns: [property: string, column: string][]): RowMapping['record'] {
  const fields = columns.map(([property, column]) => `${JSON.stringify(property)}: row[${JSON.stringify(column)}]`);
  return new Function('row', `return { ${fields.join(', ')} };`) as RowMapping['record'];
}

function withTypes<T>(mapping: RowMapping, rows: Record<string, unknown>[]): T[] {
  for (const row of rows) {
    for (const name of mapping.numbers) if (typeof row[name] === 'string') row[name] = Number(row[name]);
    for (const name of mapping.dates) if (typeof row[name] === 'string') row[name] = new Date(row[name]);
  }
  return rows as T[];
}

/*
 * Reads that render rows and drop them get plain records of the entity's
 * properties (its own column names and types) instead of entities: hydrating
 * entities into the identity map cost a listing more CPU than its query and
 * its rendering together. The entities here are data only (defineEntity, no
 * methods), so a plain record of every property is the entity's type.
 */

/** The rows `where` selects: the statement is the query builder's, run by `run` (so prepared, outside a transaction). */
export async function findRows<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  where: QBFilterQuery<T>,
  options: { orderBy: QueryOrderMap<T>; limit?: number },
): Promise<T[]> {
  const query = em.createQueryBuilder(entity).select('*').where(where).orderBy(options.orderBy);
  if (options.limit !== undefined) query.limit(options.limit);
  const { sql, params } = query.toQuery();
  return rowsOf(em, entity, statement(sql, [...params]));
}

/** The rows of a statement that selects every column of the entity's table (`select *`). */
export async function rowsOf<T extends object>(em: EntityManager, entity: EntityName<T>, select: Statement): Promise<T[]> {
  const mapping = mappingOf(em, entity);
  const rows = await run(em, select);
  return withTypes(mapping, rows.map(mapping.record));
}

/**
 * The first `limit` rows, in `order`, of a table's rows matching any of
 * several conditions (`branches`, which must not overlap): each branch is its
 * own ordered, limited subquery, so Postgres merges index scans (Merge
 * Append) instead of collecting every match and sorting it.
 */
export function mergedBranches(table: string, branches: Statement[], order: string, limit: number): Statement {
  const subqueries = branches.map((branch) => `(select * from "${table}" where ${branch.sql} order by ${order} limit ?)`);
  return statement(`select * from (${subqueries.join(' union all ')}) merged order by ${order} limit ?`, [
    ...branches.flatMap((branch) => [...branch.params, limit]),
    limit,
  ]);
}
