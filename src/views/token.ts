import type { AccessToken } from '../entities/accessToken.ts';
import { iso } from './view.ts';
import Joi from 'joi';
import { named, nullableText, nullableTimestamp, record, text } from './schema.ts';

/** Token metadata only: the secret is never stored, so it can never be shown again. */
export function presentToken(token: AccessToken, currentTokenId: string | null) {
  return {
    tokenId: token.id,
    label: token.label,
    current: token.id === currentTokenId,
    createdAt: iso(token.createdAt),
    lastUsedAt: iso(token.lastUsedAt),
  };
}

export const tokenRecord = named(
  'Token',
  record(
    { tokenId: text(), label: nullableText(), current: Joi.boolean(), createdAt: nullableTimestamp(), lastUsedAt: nullableTimestamp() },
    { revokedAt: nullableTimestamp() },
  ),
);
