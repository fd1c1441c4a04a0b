import { openLinkCode } from '../../crypto/linkCode.ts';
import { prepareSignedAction } from '../../crypto/signedAction.ts';
import { accountCodeSpent } from '../../db/nonces.ts';
import { ApiError } from '../../errors.ts';
import { agentById } from '../lookups.ts';
import { signerOf, signingBlock } from '../signing.ts';
import { defineCommand, ok } from '../types.ts';
import { accountCodeErrors, ACCOUNT_LINK_ACTION, linkSecret, refuseSecondLink, type AccountLinkPayload } from './accountLinkPayload.ts';

export interface PrepareAccountLinkParams {
  link_code: string;
}

const MAX_TTL_MS = 10 * 60_000;

/** Checks the link code and returns the payload binding it to the caller: nothing is written or consumed. */
export const prepareAccountLink = defineCommand<PrepareAccountLinkParams>({
  type: 'account-link.prepare',
  errors: [...accountCodeErrors, 'conflict'],
  async handle({ em, params, now, actor, settings }) {
    const claims = openLinkCode(linkSecret(settings), params.link_code, now);
    if (await accountCodeSpent(em, claims.nonce)) throw new ApiError('conflict', 'this link code was already used');
    const agent = await agentById(em, actor().agentId);
    await refuseSecondLink(em, agent.id);
    const payload: AccountLinkPayload = { agentId: agent.id, handle: agent.handle, accountId: claims.accountId, codeNonce: claims.nonce };
    // The signed envelope never outlives the code it carries.
    const ttlMs = Math.min(MAX_TTL_MS, claims.exp * 1000 - now.getTime());
    return ok({ signing: signingBlock(prepareSignedAction(ACCOUNT_LINK_ACTION, signerOf(agent), { ...payload }, now, { ttlMs })) });
  },
});
