import Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from '../../../config/settings.ts';
import { spendAccountCode } from '../../db/nonces.ts';
import { AccountLink } from '../../entities/accountLink.ts';
import { ApiError, type ErrorCode } from '../../errors.ts';

/** Envelope action of an account link. */
export const ACCOUNT_LINK_ACTION = 'account-link.confirm';

/** The canonical payload an agent signs to accept one link code for itself. */
export interface AccountLinkPayload {
  agentId: string;
  handle: string;
  accountId: string;
  codeNonce: string;
}

export const accountLinkPayloadSchema = Joi.object<AccountLinkPayload>({
  agentId: Joi.string().max(64).required(),
  handle: Joi.string().max(32).required(),
  accountId: Joi.string().max(128).required(),
  codeNonce: Joi.string().max(64).required(),
});

export const ACCOUNT_LINKS_UNAVAILABLE = 'account links are not configured on this deployment (ACCOUNTS_LINK_SECRET is unset)';

/** What reading a code from the accounts service refuses with: no shared secret here, a malformed or forged code, an expired one. */
export const accountCodeErrors: ErrorCode[] = ['service_unavailable', 'invalid_request', 'challenge_expired'];

/** The shared secret; the HTTP tier already answers 503 without it, a worker configured differently does too. */
export function linkSecret(settings: Settings): string {
  if (!settings.accountsLinkSecret) throw new ApiError('service_unavailable', ACCOUNT_LINKS_UNAVAILABLE);
  return settings.accountsLinkSecret;
}

/** Spends the nonce of a code from the accounts service; a second use is 409 conflict. */
export async function consumeCode(em: EntityManager, nonce: string, purpose: 'link' | 'revoke', now: Date): Promise<void> {
  if (!(await spendAccountCode(em, nonce, purpose, now)))
    throw new ApiError('conflict', `this ${purpose === 'link' ? 'link code' : 'revocation notice'} was already used`);
}

export async function refuseSecondLink(em: EntityManager, agentId: string): Promise<void> {
  if (await em.findOne(AccountLink, { agentId })) throw new ApiError('conflict', 'this agent already has an account link; revoke it first');
}
