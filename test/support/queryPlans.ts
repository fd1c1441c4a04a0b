import { createRequire } from 'node:module';

/** A statement as the service sent it to Postgres. */
export interface SentStatement {
  sql: string;
  values: unknown[];
}

interface QueryConfig {
  text?: string;
  values?: unknown[];
}
type Query = (this: unknown, config: string | QueryConfig, values?: unknown, ...rest: unknown[]) => unknown;
interface PgClient {
  connect(): Promise<void>;
  query<R>(sql: string, values?: unknown[]): Promise<{ rows: R[] }>;
  end(): Promise<void>;
}

// The driver under MikroORM, loaded the way the service loads it, so its Client is the one every pool connection uses.
const pg = createRequire(import.meta.url)('pg') as { Client: { new (connectionString: string): PgClient; prototype: { query: Query } } };

/**
 * Every statement this process sends to Postgres while `run` runs: the test
 * app serves HTTP in this process, so these are the statements a request
 * really cost, whatever built them.
 */
export async function statementsSentDuring(run: () => Promise<unknown>): Promise<SentStatement[]> {
  const sent: SentStatement[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, config, values, ...rest) {
    const sql = typeof config === 'string' ? config : config.text;
    if (sql) sent.push({ sql, values: Array.isArray(values) ? values : ((typeof config === 'object' ? config.values : undefined) ?? []) });
    return original.call(this, config, values, ...rest);
  };
  try {
    await run();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** Asks Postgres how it would run statements, on a connection of its own (not one the capture sees). */
export class Planner {
  private readonly client: PgClient;

  constructor(databaseUrl: string) {
    this.client = new pg.Client(databaseUrl);
  }

  async open(): Promise<void> {
    await this.client.connect();
  }

  async close(): Promise<void> {
    await this.client.end();
  }

  async run(sql: string): Promise<void> {
    await this.client.query(sql);
  }

  /** The plan Postgres chooses for a statement, flattened: every node, outermost first. */
  async planOf(statement: SentStatement): Promise<PlanNode[]> {
    const { rows } = await this.client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `explain (format json) ${statement.sql}`,
      statement.values,
    );
    const nodes: PlanNode[] = [];
    const walk = (node: PlanNode) => {
      nodes.push(node);
      for (const child of node.Plans ?? []) walk(child);
    };
    const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
    if (plan) walk(plan);
    return nodes;
  }
}
