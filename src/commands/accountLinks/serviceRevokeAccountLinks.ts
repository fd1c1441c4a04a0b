import { AccountLink } from '../../entities/accountLink.ts';
import { openRevocationNotice } from '../../crypto/linkCode.ts';
import { defineCommand, ok } from '../types.ts';
import { accountCodeErrors, consumeCode, linkSecret } from './accountLinkPayload.ts';

export interface ServiceRevokeParams {
  notice: string;
}

/**
 * The accounts service's side of revocation, authenticated by the shared
 * secret instead of an agent token: every link of the account goes at once.
 * The notice's nonce is one-use, so a captured notice cannot undo a later re-link.
 */
export const serviceRevokeAccountLinks = defineCommand<ServiceRevokeParams>({
  type: 'account-link.service-revoke',
  errors: [...accountCodeErrors, 'conflict'],
  async handle({ em, params, now, settings, touch }) {
    const claims = openRevocationNotice(linkSecret(settings), params.notice, now);
    await consumeCode(em, claims.nonce, 'revoke', now);
    const links = await em.find(AccountLink, { accountId: claims.accountId });
    if (links.length > 0) await em.nativeDelete(AccountLink, { id: { $in: links.map((l) => l.id) } });
    touch(...links.map((l) => `account-link:${l.agentId}`));
    return ok({ revocation: { accountId: claims.accountId, revokedLinks: links.length } });
  },
});
