import { completeKeyRotation } from './identity/completeKeyRotation.ts';
import { createChallenge } from './identity/createChallenge.ts';
import { register } from './identity/register.ts';
import { startKeyRotation } from './identity/startKeyRotation.ts';
import { addMembership } from './memberships/addMembership.ts';
import { removeMembership } from './memberships/removeMembership.ts';
import { createProject } from './projects/createProject.ts';
import { updateProject } from './projects/updateProject.ts';
import { revokeOtherTokens } from './tokens/revokeOtherTokens.ts';
import { revokeToken } from './tokens/revokeToken.ts';
import { createTopic } from './topics/createTopic.ts';
import { setTopicReview, updateTopic } from './topics/updateTopic.ts';
import type { CommandHandler } from './types.ts';

const all = [
  createChallenge,
  register,
  startKeyRotation,
  completeKeyRotation,
  revokeToken,
  revokeOtherTokens,
  createProject,
  updateProject,
  addMembership,
  removeMembership,
  createTopic,
  updateTopic,
  setTopicReview,
] as CommandHandler<never>[];

/** Every command a worker can run, by type. */
export const commandHandlers = new Map<string, CommandHandler>(all.map((h) => [h.type, h as unknown as CommandHandler]));
