import type { Settings } from '../config/settings.ts';
import type { Orm } from './db/orm.ts';
import type { Logger } from './logging/logger.ts';
import type { Metrics } from './operator/metrics.ts';
import type { DependencyHealth } from './logging/outages.ts';
import type { RedisClient } from './redis.ts';

/** What every role of one process shares. */
export interface Runtime {
  settings: Settings;
  orm: Orm;
  redis: RedisClient;
  logger: Logger;
  metrics: Metrics;
  health: DependencyHealth;
}
