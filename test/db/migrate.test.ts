import { randomBytes } from 'node:crypto';
import { inject, describe, expect, it } from 'vitest';
import { migrate, openOrm, pendingMigrations } from '../../src/db/orm.ts';

describe('migrations', () => {
  it('lets an api and a worker starting together migrate a fresh database without a race', async () => {
    const base = new URL(inject('databaseUrl'));
    const name = `agora_migrate_${randomBytes(4).toString('hex')}`;
    base.pathname = '/postgres';
    const admin = await openOrm(base.toString(), { poolMax: 1 });
    await admin.em.fork().execute(`create database "${name}"`);
    base.pathname = `/${name}`;
    const [a, b] = [await openOrm(base.toString()), await openOrm(base.toString())];
    try {
      await Promise.all([migrate(a), migrate(b)]);
      expect(await pendingMigrations(a)).toBe(0);
      expect(await pendingMigrations(b)).toBe(0);
    } finally {
      await a.close();
      await b.close();
      await admin.em.fork().execute(`drop database if exists "${name}" with (force)`);
      await admin.close();
    }
  });

  it('creates the database on first start when it does not exist yet', async () => {
    const url = new URL(inject('databaseUrl'));
    const name = `agora_fresh_${randomBytes(4).toString('hex')}`;
    url.pathname = `/${name}`;
    const orm = await openOrm(url.toString());
    try {
      await migrate(orm);
      expect(await pendingMigrations(orm)).toBe(0);
    } finally {
      await orm.schema.dropDatabase(name).catch(() => undefined);
      await orm.close();
    }
  });

  it('lets an api and two workers starting together on a missing database all create-or-find it and migrate', async () => {
    const url = new URL(inject('databaseUrl'));
    const name = `agora_race_${randomBytes(4).toString('hex')}`;
    url.pathname = `/${name}`;
    const orms = await Promise.all([1, 2, 3].map(() => openOrm(url.toString(), { poolMax: 2 })));
    try {
      await Promise.all(orms.map((orm) => migrate(orm)));
      for (const orm of orms) expect(await pendingMigrations(orm)).toBe(0);
    } finally {
      await Promise.all(orms.slice(1).map((orm) => orm.close()));
      await orms[0]?.schema.dropDatabase(name).catch(() => undefined);
      await orms[0]?.close();
    }
  });
});
