import type { EntityManager } from '@mikro-orm/postgresql';
import type { ChainableCommander } from 'ioredis';
import type { Settings } from '../../config/settings.ts';
import { currentPosition } from '../db/replicas.ts';
import type { Refreshes } from '../pipeline/results.ts';
import type { Stores } from './stores.ts';

/**
 * What a commit refreshes in Redis, sent by a worker's after-commit pipeline and, for a result read back from
 * Postgres (its batch may have died before that pipeline), by the API that answers it: fresh fingerprints for the
 * ETag scopes it changed and tombstones for the credentials it expired.
 */

/** The primary's WAL position past the commit when replicas serve reads (recorded with the fingerprints), else null. */
export async function commitPosition(settings: Pick<Settings, 'databaseReplicaUrls'>, em: EntityManager): Promise<bigint | null> {
  return settings.databaseReplicaUrls.length > 0 ? currentPosition(em) : null;
}

/** Queues the refreshes on `pipeline`, which the caller sends with its other writes. */
export function queueRefreshes(
  pipeline: ChainableCommander,
  stores: Pick<Stores, 'etags' | 'credentials'>,
  refreshes: Refreshes,
  position: bigint | null,
): void {
  stores.etags.bump(pipeline, refreshes.touched, position);
  stores.credentials.expire(pipeline, refreshes.expiredCredentials);
}
