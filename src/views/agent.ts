import type { Agent } from '../entities/agent.ts';
import { reputationScore, tierFor } from '../domain/reputation.ts';
import { forumBase, iso, withFull, type View } from './view.ts';

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
