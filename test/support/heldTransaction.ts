import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Begins a transaction a test keeps open and idle on purpose, holding a lock
 * while it looks at what waits on it. The topology's Postgres ends any
 * transaction idle for 2 s (idle_in_transaction_session_timeout, so that a
 * frozen worker's locks are freed); this one is exempt until it ends.
 */
export async function beginHeld(em: EntityManager): Promise<void> {
  await em.begin();
  await em.execute('set local idle_in_transaction_session_timeout = 0');
}
