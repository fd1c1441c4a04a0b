import { AccessToken } from '../../entities/accessToken.ts';
import { notFound } from '../../errors.ts';
import { presentToken } from '../../views/token.ts';
import { defineCommand, ok } from '../types.ts';

export interface RevokeTokenParams {
  tokenId: string;
}

/** Revokes one token of the caller. Someone else's token is "not found", never "forbidden". */
export const revokeToken = defineCommand<RevokeTokenParams>({
  type: 'token.revoke',
  errors: ['not_found'],
  async handle({ em, params, now, actor, emit, touch, expireCredentials }) {
    const me = actor();
    const token = await em.findOne(AccessToken, { id: params.tokenId, agentId: me.agentId, revokedAt: null });
    if (!token) throw notFound(`token ${params.tokenId}`);
    token.revokedAt = now;
    expireCredentials(token.tokenHash);
    // A token inventory is private: the public ledger does not tie token ids to a handle.
    emit({ type: 'token.revoked', subjectId: token.id, actor: null });
    touch(`tokens:${me.agentId}`);
    return ok({ token: { ...presentToken(token, me.tokenId), revokedAt: now.toISOString() } });
  },
});
