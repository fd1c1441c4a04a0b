import type { EntityManager, QBFilterQuery } from '@mikro-orm/postgresql';
import type { EntityName, QueryOrderMap } from '@mikro-orm/core';
import { run } from './postgres.ts';
import { statement, type Statement } from './statements.ts';

/** How one entity's columns (all, or those of some properties) become its properties, worked out once from its metadata. */
interface RowMapping {
  /** The select list: `*`, or the properties' columns. */
  columns: string;
  /** A row's record: its columns under their properties' names. */
  record: (row: Record<string, unknown>) => Record<string, unknown>;
  /** Declared numbers that Postgres sends as text (int8, numeric). */
  numbers: string[];
  /** Declared dates that MikroORM's connection leaves as text (it parses them itself when hydrating). */
  dates: string[];
}

/**
 * By entity: the mapping of all its columns, and those of lists of
 * properties, kept by the list itself (a view's constant list), weakly: a
 * list built per read would cost a mapping per read, never a leak.
 */
const mappings = new WeakMap<object, { all?: RowMapping; some: WeakMap<readonly string[], RowMapping> }>();

function mappingOf<T extends object>(em: EntityManager, entity: EntityName<T>, properties?: readonly string[]): RowMapping {
  const meta = em.getMetadata().find(entity);
  if (!meta) throw new Error(`no metadata for ${String(entity)}`);
  let known = mappings.get(meta);
  if (!known) mappings.set(meta, (known = { some: new WeakMap() }));
  let mapping = properties ? known.some.get(properties) : known.all;
  if (!mapping) {
    const props = meta.props.filter((prop) => prop.fieldNames?.length === 1 && (!properties || properties.includes(prop.name)));
    if (properties && props.length !== properties.length)
      throw new Error(`${meta.className} has no column for some of ${properties.join(', ')}`);
    mapping = {
      columns: properties ? props.map((prop) => `"${prop.fieldNames[0]}"`).join(', ') : '*',
      record: recordOf(props.map((prop) => [prop.name, prop.fieldNames[0] as string])),
      numbers: props
        .filter((prop) => prop.runtimeType === 'number' && prop.columnTypes.some((type) => type === 'bigint' || type.startsWith('numeric')))
        .map((prop) => prop.name),
      dates: props.filter((prop) => prop.runtimeType === 'Date').map((prop) => prop.name),
    };
    if (properties) known.some.set(properties, mapping);
    else known.all = mapping;
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
 * methods), so a plain record of every property (or of some) is the entity's type (or a Pick of it).
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
  return rowsOf(em, entity, () => statement(sql, [...params]));
}

/**
 * The rows of a statement written for a select list (`select(columns)`):
 * every column of the entity's table, or only those of `properties`, which
 * a view that shows part of a row asks for (fewer columns are fewer values
 * for pg to decode, the bulk of an uncached listing's CPU). `properties` is
 * a constant list: its mapping is kept by the list itself.
 */
export async function rowsOf<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  select: (columns: string) => Statement,
): Promise<T[]>;
export async function rowsOf<T extends object, K extends keyof T & string>(
  em: EntityManager,
  entity: EntityName<T>,
  select: (columns: string) => Statement,
  properties: readonly K[] | undefined,
): Promise<Pick<T, K>[]>;
export async function rowsOf<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  select: (columns: string) => Statement,
  properties?: readonly string[],
): Promise<T[]> {
  const mapping = mappingOf(em, entity, properties);
  const rows = await run(em, select(mapping.columns));
  return withTypes(mapping, rows.map(mapping.record));
}

/**
 * The first `limit` rows, in `order`, of a table's rows matching any of
 * several conditions (`branches`, which must not overlap): each branch is its
 * own ordered, limited subquery, so Postgres merges index scans (Merge
 * Append) instead of collecting every match and sorting it.
 */
export function mergedBranches(table: string, branches: Statement[], order: string, limit: number, columns = '*'): Statement {
  const subqueries = branches.map((branch) => `(select ${columns} from "${table}" where ${branch.sql} order by ${order} limit ?)`);
  return statement(`select * from (${subqueries.join(' union all ')}) merged order by ${order} limit ?`, [
    ...branches.flatMap((branch) => [...branch.params, limit]),
    limit,
  ]);
}
