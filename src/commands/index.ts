import { confirmAccountLink } from './accountLinks/confirmAccountLink.ts';
import { prepareAccountLink } from './accountLinks/prepareAccountLink.ts';
import { revokeAccountLink } from './accountLinks/revokeAccountLink.ts';
import { serviceRevokeAccountLinks } from './accountLinks/serviceRevokeAccountLinks.ts';
import { createAppeal } from './appeals/createAppeal.ts';
import { decideAppeal } from './appeals/decideAppeal.ts';
import { createAttestation } from './attestations/createAttestation.ts';
import { prepareAttestation } from './attestations/prepareAttestation.ts';
import { revokeAttestation } from './attestations/revokeAttestation.ts';
import { prepareCheckpoint } from './checkpoints/prepareCheckpoint.ts';
import { publishCheckpoint } from './checkpoints/publishCheckpoint.ts';
import { createFlag } from './flags/createFlag.ts';
import { followTarget, unfollowTarget } from './follows/followTarget.ts';
import { completeKeyRotation } from './identity/completeKeyRotation.ts';
import { createChallenge } from './identity/createChallenge.ts';
import { register } from './identity/register.ts';
import { startKeyRotation } from './identity/startKeyRotation.ts';
import { addMembership } from './memberships/addMembership.ts';
import { removeMembership } from './memberships/removeMembership.ts';
import { setModerationState } from './moderation/setModerationState.ts';
import { createPost } from './posts/createPost.ts';
import { prepareProfile } from './profiles/prepareProfile.ts';
import { publishProfile } from './profiles/publishProfile.ts';
import { createProposal } from './proposals/createProposal.ts';
import { addUpdate } from './relay/addUpdate.ts';
import { createCase } from './relay/createCase.ts';
import { reopenCase, withdrawCase } from './relay/requesterState.ts';
import { transitionCase } from './relay/transitionCase.ts';
import { closeReview } from './reviews/closeReview.ts';
import { createProject } from './projects/createProject.ts';
import { updateProject } from './projects/updateProject.ts';
import { revokeOtherTokens } from './tokens/revokeOtherTokens.ts';
import { revokeToken } from './tokens/revokeToken.ts';
import { createTopic } from './topics/createTopic.ts';
import { setTopicReview, updateTopic } from './topics/updateTopic.ts';
import { isHotCommand, type HotCommand } from './hotCommand.ts';
import type { CommandHandler } from './types.ts';
import { castVote } from './votes/castVote.ts';

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
  createPost,
  castVote,
  createProposal,
  closeReview,
  followTarget,
  unfollowTarget,
  createFlag,
  setModerationState,
  createAppeal,
  decideAppeal,
  prepareProfile,
  publishProfile,
  prepareAttestation,
  createAttestation,
  revokeAttestation,
  prepareAccountLink,
  confirmAccountLink,
  revokeAccountLink,
  serviceRevokeAccountLinks,
  prepareCheckpoint,
  publishCheckpoint,
  createCase,
  withdrawCase,
  reopenCase,
  transitionCase,
  addUpdate,
] as CommandHandler<never>[];

/** Every command a worker can run, by type. */
export const commandHandlers = new Map<string, CommandHandler>(all.map((h) => [h.type, h as unknown as CommandHandler]));

/** The hot ones (post.create, vote.cast, follow.*, flag.create): modules the set-based path runs, a batch of them or one alone (src/commands/hotCommand.ts). */
export const hotCommands = new Map<string, HotCommand>([...commandHandlers.values()].filter(isHotCommand).map((h) => [h.type, h]));
