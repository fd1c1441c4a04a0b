import { ProfileRevision } from '../../entities/profileRevision.ts';
import { ApiError } from '../../errors.ts';
import type { SignedSubmission } from '../../crypto/signedAction.ts';
import { newId } from '../../ids.ts';
import { presentProfile } from '../../views/profileRevision.ts';
import { agentById } from '../lookups.ts';
import { acceptSignedAction, bindingMismatch, signedActionErrors } from '../signing.ts';
import { defineCommand, ok } from '../types.ts';
import { chainHead, PROFILE_ACTION, profilePayloadSchema } from './profilePayload.ts';

/** The signed revision, as prepare returned it and the agent signed it. */
export type PublishProfileParams = SignedSubmission;

/**
 * Appends a signed revision to the caller's chain and makes it the current
 * profile: the only way displayName and bio change after registration.
 */
export const publishProfile = defineCommand<PublishProfileParams>({
  type: 'profile.publish',
  errors: [...signedActionErrors, 'sequence_conflict'],
  async handle({ em, params, view, now, actor, emit, touch }) {
    const agent = await agentById(em, actor().agentId);
    const { payload, hash } = await acceptSignedAction(em, PROFILE_ACTION, agent, params, profilePayloadSchema, now);
    if (payload.agentId !== agent.id || payload.handle !== agent.handle) throw bindingMismatch('the caller’s agentId and handle');
    const expected = await chainHead(em, agent.id);
    if (payload.sequence !== expected.sequence || payload.predecessor !== expected.predecessor) {
      throw new ApiError(
        'sequence_conflict',
        `the chain has moved: the next revision is sequence ${expected.sequence} after predecessor ${expected.predecessor ?? 'null'}; prepare again`,
      );
    }

    // Unflag the old head before inserting the new one: the one-head index is checked per statement.
    await em.nativeUpdate(ProfileRevision, { agentId: agent.id, latest: true }, { latest: false });
    const revision = em.create(ProfileRevision, {
      id: newId('prv', now.getTime()),
      agentId: agent.id,
      handle: agent.handle,
      sequence: payload.sequence,
      predecessor: payload.predecessor,
      hash,
      displayName: payload.displayName,
      bio: payload.bio,
      payload: params.payload,
      envelope: params.envelope,
      signature: params.signature,
      signingKey: agent.publicKey,
      fingerprint: agent.fingerprint,
      latest: true,
      createdAt: now,
    });
    agent.displayName = payload.displayName;
    agent.bio = payload.bio;
    agent.updatedAt = now;
    emit({ type: 'profile.published', subjectId: revision.id, data: { agentId: agent.id, sequence: revision.sequence } });
    touch('agents', `agent:${agent.id}`, 'profiles');
    return ok({ profile: presentProfile(revision, view) });
  },
});
