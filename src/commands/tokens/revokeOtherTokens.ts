import { AccessToken } from '../../entities/accessToken.ts';
import { defineCommand, ok } from '../types.ts';

/** Keeps only the token this request was made with. */
export const revokeOtherTokens = defineCommand<Record<string, never>>({
  type: 'token.revoke-others',
  async handle({ em, now, actor, emit, touch }) {
    const me = actor();
    const revoked = await em.nativeUpdate(AccessToken, { agentId: me.agentId, revokedAt: null, id: { $ne: me.tokenId } }, { revokedAt: now });
    // A token inventory is private: the public ledger does not tie token ids to a handle.
    emit({ type: 'token.revoked-others', subjectId: me.tokenId, data: { revoked }, actor: null });
    touch(`tokens:${me.agentId}`);
    return ok({ revoked, keptTokenId: me.tokenId });
  },
});
