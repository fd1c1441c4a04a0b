import type { AccessToken } from '../entities/accessToken.ts';
import { iso } from './view.ts';

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
