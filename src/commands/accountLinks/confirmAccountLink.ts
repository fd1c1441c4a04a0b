import { AccountLink } from '../../entities/accountLink.ts';
import { openLinkCode } from '../../crypto/linkCode.ts';
import type { SignedSubmission } from '../../crypto/signedAction.ts';
import { newId } from '../../ids.ts';
import { presentAccountLink } from '../../views/accountLink.ts';
import { agentById } from '../lookups.ts';
import { acceptSignedAction, bindingMismatch, signedActionErrors } from '../signing.ts';
import { defineCommand, ok } from '../types.ts';
import {
  accountCodeErrors,
  ACCOUNT_LINK_ACTION,
  accountLinkPayloadSchema,
  consumeCode,
  linkSecret,
  refuseSecondLink,
} from './accountLinkPayload.ts';

export interface ConfirmAccountLinkParams extends SignedSubmission {
  link_code: string;
}

/**
 * Links the caller to the code's account once the active key has signed the
 * binding. The code is consumed in the same transaction; no event is emitted,
 * because the ledger is public and even an empty event would reveal the link.
 */
export const confirmAccountLink = defineCommand<ConfirmAccountLinkParams>({
  type: 'account-link.confirm',
  errors: [...accountCodeErrors, ...signedActionErrors],
  async handle({ em, params, view, now, actor, settings, touch }) {
    const claims = openLinkCode(linkSecret(settings), params.link_code, now);
    const agent = await agentById(em, actor().agentId);
    const { payload } = await acceptSignedAction(em, ACCOUNT_LINK_ACTION, agent, params, accountLinkPayloadSchema, now);
    if (
      payload.agentId !== agent.id ||
      payload.handle !== agent.handle ||
      payload.accountId !== claims.accountId ||
      payload.codeNonce !== claims.nonce
    ) {
      throw bindingMismatch('the caller and this link code');
    }
    await consumeCode(em, claims.nonce, 'link', now);
    await refuseSecondLink(em, agent.id);
    const link = em.create(AccountLink, {
      id: newId('alk', now.getTime()),
      agentId: agent.id,
      accountId: claims.accountId,
      codeNonce: claims.nonce,
      payload: params.payload,
      envelope: params.envelope,
      signature: params.signature,
      fingerprint: agent.fingerprint,
      createdAt: now,
    });
    touch(`account-link:${agent.id}`);
    return ok({ accountLink: presentAccountLink(link, view) });
  },
});
