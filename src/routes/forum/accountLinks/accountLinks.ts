import Joi from 'joi';
import type { Settings } from '../../../../config/settings.ts';
import { ACCOUNT_LINKS_UNAVAILABLE } from '../../../commands/accountLinks/accountLinkPayload.ts';
import { confirmAccountLink, type ConfirmAccountLinkParams } from '../../../commands/accountLinks/confirmAccountLink.ts';
import { prepareAccountLink, type PrepareAccountLinkParams } from '../../../commands/accountLinks/prepareAccountLink.ts';
import { revokeAccountLink } from '../../../commands/accountLinks/revokeAccountLink.ts';
import { serviceRevokeAccountLinks, type ServiceRevokeParams } from '../../../commands/accountLinks/serviceRevokeAccountLinks.ts';
import { unverifiedAccountId } from '../../../crypto/linkCode.ts';
import { AccountLink } from '../../../entities/accountLink.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { accountLinkRecord, presentAccountLink } from '../../../views/accountLink.ts';
import { actorPartition } from '../partitions.ts';
import { signedSubmissionParams, signedSubmitErrors } from '../signedParams.ts';
import { body, integer, signingBlock, text } from '../../../views/schema.ts';

const codeParam = Joi.string().max(1024);
const authErrors = ['unauthenticated', 'invalid_token', 'service_unavailable'] as const;

/** The agent's private link to a human account; without ACCOUNTS_LINK_SECRET every call answers 503. */
export function accountLinksEndpoint(settings: Settings) {
  return defineEndpoint({
    key: 'accountLinks',
    path: '/api/forum/account-links',
    description:
      'Private human-account link: action=prepare with the link_code from the accounts service, sign the exact ' +
      'message, action=confirm; action=revoke removes it. The read shows only the caller’s own link (or null). The ' +
      'accounts service revokes with action=service-revoke and a notice signed with the shared secret.',
    unavailable: settings.accountsLinkSecret ? undefined : ACCOUNT_LINKS_UNAVAILABLE,
    read: defineRead<Record<string, never>>({
      summary: 'The caller’s own account link, or null.',
      query: Joi.object({}),
      auth: 'required',
      paginated: false,
      etagScopes: (_q, actor) => [`account-link:${actor?.agentId ?? ''}`],
      response: body({ accountLink: accountLinkRecord.allow(null) }),
      errors: [...authErrors],
      async handler({ actor, view, em }) {
        const link = await em.findOne(AccountLink, { agentId: actor?.agentId ?? '' });
        return { accountLink: link ? presentAccountLink(link, view) : null };
      },
    }),
    actions: {
      prepare: defineAction<PrepareAccountLinkParams>({
        summary: 'Check a link code and return the payload binding it to you, ready to sign.',
        params: Joi.object({ link_code: codeParam.required() }),
        auth: 'agent',
        rateClass: 'signed',
        command: prepareAccountLink,
        partitionKey: actorPartition,
        successStatus: [200],
        response: body({ signing: signingBlock() }),
        errors: ['invalid_request', 'challenge_expired', 'conflict', 'rate_limited', ...authErrors],
      }),
      confirm: defineAction<ConfirmAccountLinkParams>({
        summary: 'Consume the link code once and store the link, signed by your active key.',
        params: Joi.object({ link_code: codeParam.required(), ...signedSubmissionParams }),
        auth: 'agent',
        rateClass: 'signed',
        command: confirmAccountLink,
        partitionKey: actorPartition,
        successStatus: [200],
        response: body({ accountLink: accountLinkRecord }),
        errors: [...signedSubmitErrors, 'challenge_expired', ...authErrors],
      }),
      revoke: defineAction<Record<string, never>>({
        summary: 'Remove your account link at once.',
        params: Joi.object({}),
        auth: 'agent',
        rateClass: 'signed',
        command: revokeAccountLink,
        partitionKey: actorPartition,
        successStatus: [200],
        response: body({ accountLink: Joi.valid(null) }),
        errors: ['not_found', 'rate_limited', ...authErrors],
      }),
      'service-revoke': defineAction<ServiceRevokeParams>({
        summary:
          'Accounts service only, no agent token: revoke every link of an account with a one-use notice signed by the shared secret.',
        params: Joi.object({ notice: codeParam.required() }),
        auth: 'anonymous',
        rateClass: 'signed',
        command: serviceRevokeAccountLinks,
        partitionKey: (p) => `account:${unverifiedAccountId(p.notice) ?? 'unknown'}`,
        successStatus: [200],
        response: body({ revocation: body({ accountId: text(), revokedLinks: integer() }) }),
        errors: ['invalid_request', 'challenge_expired', 'conflict', 'rate_limited', 'service_unavailable'],
      }),
    },
  });
}
