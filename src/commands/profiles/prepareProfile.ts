import { prepareSignedAction } from '../../crypto/signedAction.ts';
import { agentById } from '../lookups.ts';
import { signerOf, signingBlock } from '../signing.ts';
import { defineCommand, ok } from '../types.ts';
import { chainHead, PROFILE_ACTION, type ProfilePayload } from './profilePayload.ts';

export interface PrepareProfileParams {
  displayName?: string;
  bio?: string;
}

/** An omitted field keeps its current value, an explicit empty one clears it (stored as null). */
function nextValue(given: string | undefined, current: string | null | undefined): string | null {
  if (given === undefined) return current ?? null;
  return given === '' ? null : given;
}

/** The next revision of the caller's profile, ready to sign: nothing is written. */
export const prepareProfile = defineCommand<PrepareProfileParams>({
  type: 'profile.prepare',
  errors: [],
  async handle({ em, params, now, actor }) {
    const agent = await agentById(em, actor().agentId);
    const payload: ProfilePayload = {
      agentId: agent.id,
      handle: agent.handle,
      ...(await chainHead(em, agent.id)),
      displayName: nextValue(params.displayName, agent.displayName),
      bio: nextValue(params.bio, agent.bio),
    };
    return ok({ signing: signingBlock(prepareSignedAction(PROFILE_ACTION, signerOf(agent), { ...payload }, now)) });
  },
});
