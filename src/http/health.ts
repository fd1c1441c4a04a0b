import type Hapi from '@hapi/hapi';
import Joi from 'joi';
import { pendingMigrations } from '../db/orm.ts';
import { pingPostgres } from '../db/probes.ts';
import type { ApiContext } from './context.ts';

const EXCLUDABLE = ['postgres', 'redis'] as const;
type Check = (typeof EXCLUDABLE)[number] | 'migrations';

/** `exclude` once or repeated, as Kubernetes' /readyz takes it. */
const readinessQuery = Joi.object({
  exclude: Joi.array()
    .items(Joi.string().valid(...EXCLUDABLE))
    .single(),
});

/**
 * /healthz: the process is alive. /readyz: this instance can serve, with
 * Postgres, Redis and migrations checked, and 503 at once while it drains.
 *
 * `/readyz?exclude=postgres` is the balancer's check (config/haproxy.cfg):
 * Postgres is shared by every instance, so an instance that cannot reach it
 * is no worse than another, and taking them all out of rotation during a
 * failover only turns writes the queue would have held into 503s and adds
 * the balancer's rise time to the outage. Migrations are always checked:
 * once seen applied they stay applied, until then they need Postgres.
 */
export function registerHealthRoutes(server: Hapi.Server, ctx: ApiContext): void {
  let migrated = false;
  server.route({ method: 'GET', path: '/healthz', handler: () => ({ ok: true }) });
  server.route({
    method: 'GET',
    path: '/readyz',
    options: { validate: { query: readinessQuery } },
    handler: async (request, h) => {
      if (server.app.draining) return h.response({ ok: false, draining: true }).code(503).header('Retry-After', '2');
      const excluded = new Set((request.query as { exclude?: Check[] }).exclude);
      const checks: Partial<Record<Check, boolean>> = {};
      if (!excluded.has('postgres') || !migrated) {
        try {
          await pingPostgres(ctx.orm);
          if (!excluded.has('postgres')) checks.postgres = true;
          if (!migrated) migrated = (await pendingMigrations(ctx.orm)) === 0;
        } catch {
          if (!excluded.has('postgres')) checks.postgres = false;
        }
      }
      if (!excluded.has('redis')) {
        try {
          checks.redis = (await ctx.redis.ping()) === 'PONG';
        } catch {
          checks.redis = false;
        }
      }
      checks.migrations = migrated;
      const ready = Object.values(checks).every(Boolean);
      const response = h.response({ ok: ready, checks }).code(ready ? 200 : 503);
      return ready ? response : response.header('Retry-After', '2');
    },
  });
}
