import type { EntityManager } from '@mikro-orm/postgresql';
import { run } from './postgres.ts';
import { statement } from './statements.ts';

/** Records a signed envelope's nonce as spent; false when it already was (a replay). */
export async function spendSignedNonce(em: EntityManager, nonce: string, action: string, now: Date): Promise<boolean> {
  const rows = await run(
    em,
    statement('insert into used_nonce (nonce, action, used_at) values (?, ?, ?) on conflict do nothing returning nonce', [
      nonce,
      action,
      now,
    ]),
  );
  return rows.length > 0;
}

/** Whether a code of the accounts service (a link code, a revocation notice) was already used. */
export async function accountCodeSpent(em: EntityManager, nonce: string): Promise<boolean> {
  return (await run(em, statement('select nonce from account_code_nonce where nonce = ?', [nonce]))).length > 0;
}

/** Records a code of the accounts service as used; false when it already was. */
export async function spendAccountCode(em: EntityManager, nonce: string, purpose: 'link' | 'revoke', now: Date): Promise<boolean> {
  const rows = await run(
    em,
    statement('insert into account_code_nonce (nonce, purpose, used_at) values (?, ?, ?) on conflict do nothing returning nonce', [
      nonce,
      purpose,
      now,
    ]),
  );
  return rows.length > 0;
}

/** A prepared signed action, kept under its nonce until it expires (src/db/retention.ts prunes it after). */
export interface PreparedActionRow {
  nonce: string;
  action: string;
  agentId: string;
  payload: string;
  envelope: string;
  expiresAt: string;
}

export async function rememberPreparedAction(em: EntityManager, row: PreparedActionRow): Promise<void> {
  await run(
    em,
    statement('insert into prepared_action (nonce, action, agent_id, payload, envelope, expires_at) values (?, ?, ?, ?, ?, ?)', [
      row.nonce,
      row.action,
      row.agentId,
      row.payload,
      row.envelope,
      row.expiresAt,
    ]),
  );
}

/** The payload and envelope this agent prepared for `action` under `nonce`; undefined when there is none (unknown, another's, pruned). */
export async function preparedAction(
  em: EntityManager,
  nonce: string,
  action: string,
  agentId: string,
): Promise<{ payload: string; envelope: string } | undefined> {
  const [row] = await run<{ payload: string; envelope: string }>(
    em,
    statement('select payload, envelope from prepared_action where nonce = ? and action = ? and agent_id = ?', [nonce, action, agentId]),
  );
  return row;
}
