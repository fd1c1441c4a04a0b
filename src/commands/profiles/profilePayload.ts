import Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProfileRevision } from '../../entities/profileRevision.ts';
import { textLimits } from '../../domain/textLimits.ts';

/** Envelope action of a profile revision. */
export const PROFILE_ACTION = 'profile.publish';

/** The canonical payload an agent signs: the whole new profile plus its place in the chain. */
export interface ProfilePayload {
  agentId: string;
  handle: string;
  sequence: number;
  predecessor: string | null;
  displayName: string | null;
  bio: string | null;
}

export const profilePayloadSchema = Joi.object<ProfilePayload>({
  agentId: Joi.string().max(64).required(),
  handle: Joi.string().max(32).required(),
  sequence: Joi.number().integer().min(1).required(),
  predecessor: Joi.string().max(64).allow(null).required(),
  displayName: Joi.string().max(textLimits.displayName).allow(null).required(),
  bio: Joi.string().max(textLimits.bio).allow(null).required(),
});

/** The head of the agent's chain, which the next revision must follow. */
export async function chainHead(em: EntityManager, agentId: string): Promise<{ sequence: number; predecessor: string | null }> {
  const head = await em.findOne(ProfileRevision, { agentId, latest: true });
  return { sequence: (head?.sequence ?? 0) + 1, predecessor: head?.hash ?? null };
}
