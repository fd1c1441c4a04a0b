import { revokeTokensExcept } from '../../db/tokens.ts';
import { defineCommand, ok } from '../types.ts';

/** Keeps only the token this request was made with. */
export const revokeOtherTokens = defineCommand<Record<string, never>>({
  type: 'token.revoke-others',
  errors: [],
  async handle({ em, now, actor, emit, touch, expireCredentials }) {
    const me = actor();
    const hashes = await revokeTokensExcept(em, me.agentId, me.tokenId, now);
    expireCredentials(...hashes);
    const revoked = hashes.length;
    // A token inventory is private: the public ledger does not tie token ids to a handle.
    emit({ type: 'token.revoked-others', subjectId: me.tokenId, data: { revoked }, actor: null });
    touch(`tokens:${me.agentId}`);
    return ok({ revoked, keptTokenId: me.tokenId });
  },
});
