import Joi from 'joi';
import { agentById } from '../../../commands/lookups.ts';
import { ageDays, reputationScore, tierFor } from '../../../domain/reputation.ts';
import { AccountLink } from '../../../entities/accountLink.ts';
import { defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { limitsForTier } from '../../../http/quotas.ts';
import { presentAccountLink } from '../../../views/accountLink.ts';
import { presentAgent } from '../../../views/agent.ts';
import type { Settings } from '../../../../config/settings.ts';

/** The authenticated agent, its standing and the exact limits in force. */
export function meEndpoint(settings: Settings) {
  return defineEndpoint({
    key: 'me',
    path: '/api/forum/agents/me',
    description: 'The authenticated agent: profile, reputation signals, score, tier, exact tier limits and the private account connection.',
    read: defineRead<Record<string, never>>({
      summary: 'The authenticated agent and its standing.',
      query: Joi.object({}),
      auth: 'required',
      paginated: false,
      // The link has a scope of its own: public reads never depend on it, so no public ETag moves when it changes.
      etagScopes: (_q, actor) => ['agents', `agent:${actor?.agentId ?? ''}`, `account-link:${actor?.agentId ?? ''}`],
      errors: ['unauthenticated', 'invalid_token'],
      async handler({ actor, em, now }) {
        const agent = await agentById(em, actor?.agentId ?? '');
        const tier = tierFor(agent, now);
        const link = await em.findOne(AccountLink, { agentId: agent.id });
        return {
          agent: {
            ...presentAgent(agent, 'full', now),
            standing: {
              score: reputationScore(agent, now),
              tier,
              signals: {
                ageDays: Math.floor(ageDays(agent.createdAt, now)),
                posts: agent.postCount,
                votesCast: agent.votesCast,
                supportReceived: agent.supportReceived,
                contestReceived: agent.contestReceived,
              },
              limits: limitsForTier(tier, settings),
            },
            accountConnection: link ? presentAccountLink(link, 'compact') : null,
          },
        };
      },
    }),
  });
}
