import canonicalize from 'canonicalize';
import { Checkpoint } from '../../entities/checkpoint.ts';
import { ApiError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { CHECKPOINT_ACTION, checkpointPayload, checkpointPayloadSchema, type CheckpointPayload } from '../../ledger/checkpointPayload.ts';
import { projectTreeSize, treeHead } from '../../ledger/tree.ts';
import { presentCheckpoint } from '../../views/checkpoint.ts';
import { agentById } from '../lookups.ts';
import { acceptSignedAction, bindingMismatch, signedActionErrors } from '../signing.ts';
import { defineCommand, ok } from '../types.ts';
import { chainHead, requireProject } from './chain.ts';

export interface PublishCheckpointParams {
  projectSlug: string;
  payload: string;
  envelope: string;
  signature: string;
}

/**
 * Appends a checkpoint to the caller key's chain for the project. Runs in
 * the signer's partition, like key rotation, so the key verified is still the
 * active one when the checkpoint commits, and two publications of one chain
 * (one key, one agent) never race; the unique (project, key, sequence) and
 * predecessor constraints back that up.
 *
 * Refusals: a predecessor or sequence that is not this key's current chain
 * head (stale or forked) and a tree larger than the ledger are 409 conflict,
 * since retrying after a fresh prepare succeeds; a root or range that differs
 * from the ledger at that size is 400, since the ledger is append-only and
 * that statement can never become true.
 */
export const publishCheckpoint = defineCommand<PublishCheckpointParams>({
  type: 'checkpoint.publish',
  errors: signedActionErrors,
  async handle({ em, params, view, now, actor, emit, touch }) {
    const agent = await agentById(em, actor().agentId);
    const { payload } = await acceptSignedAction<CheckpointPayload>(em, CHECKPOINT_ACTION, agent, params, checkpointPayloadSchema, now);
    const slug = params.projectSlug;
    if (payload.projectSlug !== slug) throw bindingMismatch(`project ${slug}`);
    await requireProject(em, slug);

    const head = await chainHead(em, slug, agent.fingerprint);
    const claimed = payload.predecessor;
    const linksHead = head
      ? claimed?.checkpointId === head.id && claimed.treeSize === head.treeSize && claimed.rootHash === head.rootHash
      : claimed === null;
    if (!linksHead || payload.sequence !== (head?.sequence ?? 0) + 1) {
      throw new ApiError(
        'conflict',
        `stale or forked predecessor: this key's chain for ${slug} ends at ${head ? `${head.id} (sequence ${head.sequence})` : 'nothing yet'}; prepare again`,
      );
    }
    if (head && payload.treeSize < head.treeSize) {
      throw new ApiError('invalid_request', 'a chain never shrinks: treeSize is below the predecessor’s', [
        { field: 'payload.treeSize', issue: 'below predecessor' },
      ]);
    }
    const available = await projectTreeSize(em, slug);
    if (payload.treeSize > available)
      throw new ApiError('conflict', `the ledger holds ${available} events of ${slug}, fewer than treeSize ${payload.treeSize}`);

    const expected = checkpointPayload(await treeHead(em, slug, payload.treeSize), head);
    const differing = (Object.keys(expected) as (keyof CheckpointPayload)[]).filter(
      (key) => canonicalize(expected[key]) !== canonicalize(payload[key]),
    );
    if (differing.length > 0) {
      throw new ApiError(
        'invalid_request',
        `the signed payload does not match the ledger at treeSize ${payload.treeSize}`,
        differing.map((key) => ({ field: `payload.${key}`, issue: 'differs from the ledger' })),
      );
    }

    const checkpoint = em.create(Checkpoint, {
      id: newId('ckp', now.getTime()),
      projectSlug: slug,
      signerAgentId: agent.id,
      signerFingerprint: agent.fingerprint,
      signerPublicKey: agent.publicKey,
      sequence: payload.sequence,
      predecessorId: head?.id ?? null,
      treeSize: payload.treeSize,
      rootHash: payload.rootHash,
      firstEventId: payload.firstEventId,
      lastEventId: payload.lastEventId,
      payload: params.payload,
      envelope: params.envelope,
      signature: params.signature,
      createdAt: now,
    });
    emit({
      type: 'checkpoint.published',
      projectSlug: slug,
      subjectId: checkpoint.id,
      data: { signerFingerprint: agent.fingerprint, sequence: payload.sequence, treeSize: payload.treeSize, rootHash: payload.rootHash },
    });
    touch('checkpoints');
    return ok({ checkpoint: presentCheckpoint(checkpoint, view) });
  },
});
