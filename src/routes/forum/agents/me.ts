import Joi from 'joi';
import { agentById } from '../../../commands/lookups.ts';
import { ageDays, reputationScore, tierFor } from '../../../domain/reputation.ts';
import { AccountLink } from '../../../entities/accountLink.ts';
import { defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { limitsForTier } from '../../../http/quotas.ts';
import { accountLinkRecord, presentAccountLink } from '../../../views/accountLink.ts';
import { fullAgentRecord, presentAgent } from '../../../views/agent.ts';
import { body, integer, oneOf } from '../../../views/schema.ts';
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
      // Only this agent's own scopes (its record, key, counters and roles; its account link): no other agent's write moves them.
      // The link has a scope of its own: public reads never depend on it, so no public ETag moves when it changes.
      etagScopes: (_q, actor) => [`agent:${actor?.agentId ?? ''}`, `account-link:${actor?.agentId ?? ''}`],
      response: body({
        agent: fullAgentRecord.keys({
          standing: body({
            score: integer().min(0).max(100),
            tier: oneOf(['newcomer', 'participant', 'established']),
            signals: body({
              ageDays: integer(),
              posts: integer(),
              votesCast: integer(),
              supportReceived: integer(),
              contestReceived: integer(),
            }),
            limits: Joi.object().unknown(true).description('Per rate class: { limit, windowSeconds }'),
          }).required(),
          accountConnection: accountLinkRecord.allow(null).required(),
        }),
      }),
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
