import type { EntityManager, QBFilterQuery } from '@mikro-orm/postgresql';
import type { EntityName, QueryOrderMap } from '@mikro-orm/core';

/**
 * Properties a row brings back as text although the entity declares a
 * number: Postgres sends int8 as text, and hydration would convert it.
 */
const numbersSentAsText = new Map<string, string[]>();

function numericProperties<T extends object>(em: EntityManager, entity: EntityName<T>): string[] {
  const meta = em.getMetadata().find(entity);
  if (!meta) throw new Error(`no metadata for ${String(entity)}`);
  let names = numbersSentAsText.get(meta.className);
  if (!names) {
    names = meta.props.filter((prop) => prop.runtimeType === 'number' && prop.columnTypes.some((type) => type === 'bigint' || type.startsWith('numeric'))).map((prop) => prop.name);
    numbersSentAsText.set(meta.className, names);
  }
  return names;
}

/**
 * Rows of an entity's table as plain records of its properties, for reads
 * that render rows and drop them: the entity's own mapping (column names,
 * types) without hydrating entities into the identity map, which cost a
 * listing more CPU than its query and its rendering together. The entities
 * here are data only (defineEntity, no methods), so a plain record of every
 * property is the entity's type.
 */
export async function findRows<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  where: QBFilterQuery<T>,
  options: { orderBy: QueryOrderMap<T>; limit?: number },
): Promise<T[]> {
  const query = em.createQueryBuilder(entity).select('*').where(where).orderBy(options.orderBy);
  if (options.limit !== undefined) query.limit(options.limit);
  const rows = (await query.execute('all')) as Record<string, unknown>[];
  const numeric = numericProperties(em, entity);
  if (numeric.length > 0) {
    for (const row of rows) for (const name of numeric) if (typeof row[name] === 'string') row[name] = Number(row[name]);
  }
  return rows as T[];
}
