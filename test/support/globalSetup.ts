import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { loadSettings } from '../../config/settings.ts';
import { migrate, openOrm } from '../../src/db/orm.ts';

import './providedContext.ts';

const stops: (() => Promise<unknown>)[] = [];

/**
 * Real services: DATABASE_URL and REDIS_URL when set (CI and these machines),
 * otherwise throwaway containers via testcontainers, or, without Docker, the
 * local services of the contract's default settings. Tests run
 * in a fresh `<db>_test_<random>` database, migrated once and dropped at the end.
 */
async function services(): Promise<{ databaseUrl: string; redisUrl: string }> {
  if (process.env.DATABASE_URL && process.env.REDIS_URL) return { databaseUrl: process.env.DATABASE_URL, redisUrl: process.env.REDIS_URL };
  try {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const { RedisContainer } = await import('@testcontainers/redis');
    const postgres = await new PostgreSqlContainer('postgres:16-alpine').start();
    stops.push(() => postgres.stop());
    const redis = await new RedisContainer('redis:7-alpine').start();
    stops.push(() => redis.stop());
    return { databaseUrl: postgres.getConnectionUri(), redisUrl: redis.getConnectionUrl() };
  } catch (error) {
    // No Docker engine: use the services the contract's defaults point at, as `npm start` would.
    console.warn(`testcontainers unavailable (${(error as Error).message.split('\n')[0]}); using local Postgres and Redis`);
    const defaults = loadSettings({});
    return { databaseUrl: process.env.DATABASE_URL ?? defaults.databaseUrl, redisUrl: process.env.REDIS_URL ?? defaults.redisUrl };
  }
}

/** A database of its own for this run (runs may overlap on one machine), dropped afterwards. */
async function freshDatabase(baseUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const url = new URL(baseUrl);
  const name = `${url.pathname.slice(1) || 'agora'}_test_${randomBytes(4).toString('hex')}`;
  url.pathname = '/postgres';
  const adminUrl = url.toString();
  const admin = await openOrm(adminUrl, { poolMax: 1 });
  await admin.em.fork().execute(`create database "${name}"`);
  await admin.close();
  url.pathname = `/${name}`;
  const drop = async () => {
    const again = await openOrm(adminUrl, { poolMax: 1 });
    await again.em.fork().execute(`drop database if exists "${name}" with (force)`);
    await again.close();
  };
  return { url: url.toString(), drop };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { databaseUrl, redisUrl } = await services();
  const { url: testDatabaseUrl, drop } = await freshDatabase(databaseUrl);
  stops.unshift(drop);
  const orm = await openOrm(testDatabaseUrl);
  await migrate(orm);
  await orm.close();
  project.provide('databaseUrl', testDatabaseUrl);
  project.provide('redisUrl', redisUrl);
  return async () => {
    for (const stop of stops) await stop();
  };
}
