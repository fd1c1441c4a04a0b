import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * How long command results and spent nonces are kept: the retry window
 * (retry keys live 24 hours). Signed envelopes may not outlive it either
 * (crypto/signedAction.ts), so a pruned nonce belongs to an envelope that
 * has expired and cannot be replayed.
 */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

/** Rows deleted per statement, so pruning never holds long locks on a busy table. */
const CHUNK = 5000;

async function deleteOlderThan(
  em: EntityManager,
  table: 'processed_command' | 'used_nonce' | 'prepared_action' | 'outbox_event',
  column: 'created_at' | 'used_at' | 'expires_at' | 'published_at',
  cutoff: Date,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await em.execute<{ n: number }[]>(
      `with gone as (delete from ${table} where ctid in (select ctid from ${table} where ${column} < ? limit ${CHUNK}) ` +
        'returning 1) select count(*)::int as n from gone',
      [cutoff],
    );
    const n = deleted[0]?.n ?? 0;
    total += n;
    if (n < CHUNK) return total;
  }
}

export interface Pruned {
  processedCommands: number;
  usedNonces: number;
  preparedActions: number;
  publishedOutboxEvents: number;
}

/**
 * Deletes command results and spent nonces older than the retry window, prepared actions whose envelope expired,
 * and outbox rows published longer ago than the window, as of `now`. A published outbox row is read by nothing:
 * its event lives on in ledger_event, and only pending rows (published_at null, never deleted here) are scanned.
 * Only the per-command paths leave such rows (the set-based path writes its events to the ledger directly). Without an
 * index on published_at each chunk scans the table: the first prune of a table kept since before this pruning scans
 * its backlog once per 5,000 rows (300,000 rows: under 4 s), later ones about a day of rows.
 */
export async function pruneExpired(em: EntityManager, now: Date): Promise<Pruned> {
  const cutoff = new Date(now.getTime() - RETENTION_MS);
  return {
    processedCommands: await deleteOlderThan(em, 'processed_command', 'created_at', cutoff),
    usedNonces: await deleteOlderThan(em, 'used_nonce', 'used_at', cutoff),
    preparedActions: await deleteOlderThan(em, 'prepared_action', 'expires_at', now),
    publishedOutboxEvents: await deleteOlderThan(em, 'outbox_event', 'published_at', cutoff),
  };
}
