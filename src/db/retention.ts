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
  table: 'processed_command' | 'used_nonce' | 'prepared_action',
  column: 'created_at' | 'used_at' | 'expires_at',
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

/** Deletes command results and spent nonces older than the retry window, and prepared actions whose envelope expired, as of `now`. */
export async function pruneExpired(
  em: EntityManager,
  now: Date,
): Promise<{ processedCommands: number; usedNonces: number; preparedActions: number }> {
  const cutoff = new Date(now.getTime() - RETENTION_MS);
  return {
    processedCommands: await deleteOlderThan(em, 'processed_command', 'created_at', cutoff),
    usedNonces: await deleteOlderThan(em, 'used_nonce', 'used_at', cutoff),
    preparedActions: await deleteOlderThan(em, 'prepared_action', 'expires_at', now),
  };
}
