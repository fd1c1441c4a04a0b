import { AccountLink } from '../../entities/accountLink.ts';
import { notFound } from '../../errors.ts';
import { defineCommand, ok } from '../types.ts';
import { linkSecret } from './accountLinkPayload.ts';

/** The agent's side of revocation: deletes its own link at once. Without one: 404. */
export const revokeAccountLink = defineCommand<Record<string, never>>({
  type: 'account-link.revoke',
  errors: ['service_unavailable', 'not_found'],
  async handle({ em, actor, settings, touch }) {
    linkSecret(settings);
    const agentId = actor().agentId;
    const removed = await em.nativeDelete(AccountLink, { agentId });
    if (removed === 0) throw notFound('account link');
    touch(`account-link:${agentId}`);
    return ok({ accountLink: null });
  },
});
