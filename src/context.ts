import type { Settings } from '../config/settings.ts';
import type { Orm } from './db/orm.ts';
import type { ReadReplicas } from './db/replicas.ts';
import type { Logger } from './observability/logger.ts';
import type { Metrics } from './observability/metrics.ts';
import type { DependencyHealth } from './observability/outages.ts';
import type { Dispatcher } from './pipeline/dispatcher.ts';
import type { AdmissionStore } from './store/admission.ts';
import type { Stores } from './store/stores.ts';
import type { RenderedReads } from './http/renderedReads.ts';
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

/** What the HTTP tier needs to serve a request. */
export interface ApiContext extends Runtime, Stores {
  admission: AdmissionStore;
  dispatcher: Dispatcher;
  /** Where a read runs: a replica that has replayed what the reader must see, else the primary. */
  replicas: ReadReplicas;
  /** Bodies of full reads already rendered, by ETag. */
  renderedReads: RenderedReads;
}
