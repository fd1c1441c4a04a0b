import type { TestProject } from 'vitest/node';
import { migrate, openOrm } from '../../src/db/orm.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}

const stops: (() => Promise<unknown>)[] = [];

/**
 * Real services: DATABASE_URL and REDIS_URL when set (CI and these machines),
 * otherwise throwaway containers via testcontainers (needs Docker). Tests run
 * in a fresh `<db>_test` database, migrated once.
 */
async function services(): Promise<{ databaseUrl: string; redisUrl: string }> {
  if (process.env.DATABASE_URL && process.env.REDIS_URL) return { databaseUrl: process.env.DATABASE_URL, redisUrl: process.env.REDIS_URL };
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { RedisContainer } = await import('@testcontainers/redis');
  const postgres = await new PostgreSqlContainer('postgres:16-alpine').start();
  const redis = await new RedisContainer('redis:7-alpine').start();
  stops.push(() => postgres.stop(), () => redis.stop());
  return { databaseUrl: postgres.getConnectionUri(), redisUrl: redis.getConnectionUrl() };
}

async function freshDatabase(baseUrl: string): Promise<string> {
  const url = new URL(baseUrl);
  const name = `${url.pathname.slice(1) || 'agora'}_test`;
  url.pathname = '/postgres';
  const admin = await openOrm(url.toString(), { poolMax: 1 });
  await admin.em.fork().execute(`drop database if exists "${name}" with (force)`);
  await admin.em.fork().execute(`create database "${name}"`);
  await admin.close();
  url.pathname = `/${name}`;
  return url.toString();
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { databaseUrl, redisUrl } = await services();
  const testDatabaseUrl = await freshDatabase(databaseUrl);
  const orm = await openOrm(testDatabaseUrl);
  await migrate(orm);
  await orm.close();
  project.provide('databaseUrl', testDatabaseUrl);
  project.provide('redisUrl', redisUrl);
  return async () => {
    for (const stop of stops) await stop();
  };
}
