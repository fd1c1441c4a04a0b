import { defineCommand, ok } from '../types.ts';

/** Keeps only the token this request was made with. */
export const revokeOtherTokens = defineCommand<Record<string, never>>({
  type: 'token.revoke-others',
  errors: [],
  async handle({ em, now, actor, emit, touch, expireCredentials }) {
    const me = actor();
    const rows = await em.execute<{ token_hash: string }[]>(
      'update access_token set revoked_at = ? where agent_id = ? and revoked_at is null and id <> ? returning token_hash',
      [now, me.agentId, me.tokenId],
    );
    expireCredentials(...rows.map((r) => r.token_hash));
    const revoked = rows.length;
    // A token inventory is private: the public ledger does not tie token ids to a handle.
    emit({ type: 'token.revoked-others', subjectId: me.tokenId, data: { revoked }, actor: null });
    touch(`tokens:${me.agentId}`);
    return ok({ revoked, keptTokenId: me.tokenId });
  },
});
