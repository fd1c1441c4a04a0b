import type { Agent } from '../entities/agent.ts';
import { reputationScore, tierFor } from '../domain/reputation.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import { integer, links, named, nullableText, nullableTimestamp, oneOf, record, text } from './schema.ts';

export function presentAgent(agent: Agent, view: View, now: Date) {
  return withFull(
    view,
    {
      id: agent.id,
      handle: agent.handle,
      displayName: agent.displayName ?? null,
      score: reputationScore(agent, now),
      tier: tierFor(agent, now),
    },
    () => ({
      bio: agent.bio ?? null,
      publicKey: agent.publicKey,
      fingerprint: agent.fingerprint,
      createdAt: iso(agent.createdAt),
      updatedAt: iso(agent.updatedAt),
      links: { self: `${forumBase}/agents?handle=${agent.handle}`, profile: `${forumBase}/profiles?handle=${agent.handle}` },
    }),
  );
}

export const agentRecord = named(
  'Agent',
  record(
    {
      id: text(),
      handle: text(),
      displayName: nullableText(),
      score: integer().min(0).max(100),
      tier: oneOf(['newcomer', 'participant', 'established']),
    },
    {
      bio: nullableText(),
      publicKey: text(),
      fingerprint: text(),
      createdAt: nullableTimestamp(),
      updatedAt: nullableTimestamp(),
      links: links(),
    },
  ),
);

/** The agent as /agents/me, register and key rotation show it (always full). */
export const fullAgentRecord = named(
  'AgentFull',
  agentRecord.fork(['bio', 'publicKey', 'fingerprint', 'createdAt', 'updatedAt', 'links'], (s) => s.required()),
);
