import {
  type AnyEntity,
  type Configuration,
  type Dictionary,
  type EntityData,
  isRaw,
  JsonProperty,
  type LoggingOptions,
  NativeQueryBuilder,
  type PostgreSqlPlatform,
  PostgreSqlConnection,
  PostgreSqlDriver,
  type QueryResult,
  raw,
  type RawQueryFragment,
  type Transaction,
  Utils,
} from '@mikro-orm/postgresql';
import { CompiledQuery, type Kysely } from 'kysely';

/**
 * MikroORM's statements with their values bound. MikroORM 7 formats every
 * value into the SQL text it sends (mikro-orm/mikro-orm#8001), so a statement
 * of the unit of work that fails is logged by Postgres with the bodies,
 * payloads and signatures it carried. Here the same statements travel with
 * `$n` placeholders and their values apart (the extended protocol), exactly
 * as the port (src/db/postgres.ts) sends its own. A statement without values
 * goes as before, alone in a simple-protocol message (migrations send several
 * statements in one).
 */

/** A statement as pg takes it. */
interface Bound {
  text: string;
  values: unknown[];
}

/**
 * One value of MikroORM's, as its placeholders: a list (`in (?)`) is a
 * placeholder per item, as MikroORM writes it; a raw fragment is its own
 * text, its values bound in turn; an object (or a list MikroORM marks as
 * JSON) is its JSON text; pg encodes the rest (text, numbers, booleans,
 * dates as timestamps, buffers as bytea).
 */
function placeholders(platform: PostgreSqlPlatform, value: unknown, values: unknown[]): string {
  if (isRaw(value)) return numbered(platform, value.sql, value.params, values);
  if (Array.isArray(value) && !(value as { [JsonProperty]?: boolean })[JsonProperty])
    return value.map((item) => placeholders(platform, item, values)).join(', ');
  if (Utils.isPlainObject(value) || Array.isArray(value)) values.push(JSON.stringify(value));
  else values.push(typeof value === 'bigint' ? value.toString() : value);
  return `$${values.length}`;
}

/** MikroORM's placeholders read as its own formatter reads them: `??` an identifier (quoted in place), `\?` a question mark, `?` a value. */
function numbered(platform: PostgreSqlPlatform, sql: string, params: readonly unknown[], values: unknown[]): string {
  let text = '';
  let next = 0;
  let from = 0;
  for (let at = sql.indexOf('?'); at >= 0; at = sql.indexOf('?', from)) {
    if (sql[at - 1] === '\\') {
      text += `${sql.slice(from, at - 1)}?`;
      from = at + 1;
    } else if (sql[at + 1] === '?') {
      text += sql.slice(from, at) + platform.quoteIdentifier(params[next++] as string);
      from = at + 2;
    } else {
      text += sql.slice(from, at) + placeholders(platform, params[next++], values);
      from = at + 1;
    }
  }
  return text + sql.slice(from);
}

function boundStatement(platform: PostgreSqlPlatform, sql: string, params: readonly unknown[]): Bound {
  const values: unknown[] = [];
  const text = numbered(platform, sql, params, values);
  return { text, values };
}

/** MikroORM's Postgres connection, its `execute` (every statement of the unit of work, every `em.execute`) sending values bound. */
class BoundConnection extends PostgreSqlConnection {
  override async execute<T extends QueryResult | EntityData<AnyEntity> | EntityData<AnyEntity>[] = EntityData<AnyEntity>[]>(
    query: string | NativeQueryBuilder | RawQueryFragment,
    params: readonly unknown[] | Dictionary<unknown> = [],
    method: 'all' | 'get' | 'run' = 'all',
    ctx?: Transaction,
    loggerContext?: LoggingOptions,
  ): Promise<T> {
    await this.ensureConnection();
    // The forms MikroORM's own execute takes: a native query builder, named parameters, a raw fragment.
    let fragment = query instanceof NativeQueryBuilder ? query.toRaw() : query;
    if (typeof fragment === 'string' && !Array.isArray(params)) fragment = raw(fragment, params);
    const [sql, values] = isRaw(fragment) ? [fragment.sql, fragment.params] : [fragment as string, params as readonly unknown[]];
    const { text, values: bound } = boundStatement(this.platform as PostgreSqlPlatform, sql, values);
    const executor = (ctx as Kysely<unknown> | undefined) ?? this.getClient();
    return this.executeQuery(
      text,
      async () => this.transformRawResult<T>(await executor.executeQuery(CompiledQuery.raw(text, bound)), method),
      { ...loggerContext, query: text },
    );
  }
}

/** The Postgres driver on BoundConnection: `driver` in MikroORM's options (src/db/orm.ts). */
export class BoundPostgreSqlDriver extends PostgreSqlDriver {
  constructor(config: Configuration) {
    super(config);
    // The driver takes its connection's class from its own constructor; replaced before anything connects.
    (this as unknown as { connection: PostgreSqlConnection }).connection = new BoundConnection(this.config);
  }
}
