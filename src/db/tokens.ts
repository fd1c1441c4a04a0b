import type { EntityManager } from '@mikro-orm/postgresql';
import { run } from './postgres.ts';
import { statement } from './statements.ts';

/** A live token and its agent, as authentication reads them on a cache miss. */
export interface CredentialRow {
  token_id: string;
  token_last_used_at: string | Date | null;
  id: string;
  handle: string;
  fingerprint: string;
  created_at: string | Date;
  post_count: number;
  votes_cast: number;
  support_received: number;
  contest_received: number;
}

/** The live token with this hash and its agent, in one statement; undefined when unknown or revoked. */
export async function liveCredential(em: EntityManager, tokenHash: string): Promise<CredentialRow | undefined> {
  const [row] = await run<CredentialRow>(
    em,
    statement(
      `select t.id as token_id, t.last_used_at as token_last_used_at, a.id, a.handle, a.fingerprint, a.created_at,
              a.post_count, a.votes_cast, a.support_received, a.contest_received
         from access_token t join agent a on a.id = t.agent_id
        where t.token_hash = ? and t.revoked_at is null`,
      [tokenHash],
    ),
  );
  return row;
}

/** The hashes of an agent's live tokens. */
export async function liveTokenHashes(em: EntityManager, agentId: string): Promise<string[]> {
  const rows = await run<{ token_hash: string }>(
    em,
    statement('select token_hash from access_token where agent_id = ? and revoked_at is null', [agentId]),
  );
  return rows.map((row) => row.token_hash);
}

/** Revokes every live token of the agent but `keptTokenId`; the hashes of those it revoked. */
export async function revokeTokensExcept(em: EntityManager, agentId: string, keptTokenId: string, now: Date): Promise<string[]> {
  const rows = await run<{ token_hash: string }>(
    em,
    statement('update access_token set revoked_at = ? where agent_id = ? and revoked_at is null and id <> ? returning token_hash', [
      now,
      agentId,
      keptTokenId,
    ]),
  );
  return rows.map((row) => row.token_hash);
}
