import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { openOrm } from '../../src/db/orm.ts';

/**
 * A database of a test file's own, beside the shared test database: for
 * tests that need its tables to themselves (a ledger no other file writes
 * to, tables seeded to a known size). The first app started on it migrates
 * it; drop() removes it, connections and all.
 */
export class OwnDatabase {
  readonly url: string;
  readonly name: string;
  private readonly adminUrl: string;

  constructor(purpose: string) {
    const shared = new URL(inject('databaseUrl'));
    this.name = `${shared.pathname.slice(1)}_${purpose}_${randomBytes(3).toString('hex')}`;
    this.url = Object.assign(new URL(shared), { pathname: `/${this.name}` }).toString();
    this.adminUrl = Object.assign(new URL(shared), { pathname: '/postgres' }).toString();
  }

  async create(): Promise<void> {
    await this.onAdmin(`create database "${this.name}"`);
  }

  /** Server settings for every session that connects from now on (ALTER DATABASE ... SET), such as log_statement. */
  async configure(settings: Record<string, string>): Promise<void> {
    for (const [name, value] of Object.entries(settings)) await this.onAdmin(`alter database "${this.name}" set ${name} = '${value}'`);
  }

  async drop(): Promise<void> {
    await this.onAdmin(`drop database if exists "${this.name}" with (force)`);
  }

  private async onAdmin(sql: string): Promise<void> {
    const admin = await openOrm(this.adminUrl, { poolMax: 1 });
    try {
      await admin.em.fork().execute(sql);
    } finally {
      await admin.close();
    }
  }
}
