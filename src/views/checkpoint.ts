import type { Checkpoint } from '../entities/checkpoint.ts';
import { checkpointNote, checkpointOrigin } from '../ledger/checkpointPayload.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import { integer, links, named, nullableText, nullableTimestamp, record, text } from './schema.ts';

/**
 * Compact: chain identifiers (signerFingerprint, sequence, predecessorId) and
 * range identifiers (treeSize, rootHash, first/last eventId). Full adds what
 * re-verification needs: payload, envelope, signature and the signer's key
 * as it was when signing (a later key rotation does not orphan the chain).
 */
export function presentCheckpoint(checkpoint: Checkpoint, view: View) {
  const compact = {
    checkpointId: checkpoint.id,
    projectSlug: checkpoint.projectSlug,
    signerFingerprint: checkpoint.signerFingerprint,
    sequence: checkpoint.sequence,
    predecessorId: checkpoint.predecessorId,
    treeSize: checkpoint.treeSize,
    rootHash: checkpoint.rootHash,
    firstEventId: checkpoint.firstEventId,
    lastEventId: checkpoint.lastEventId,
  };
  const slug = checkpoint.projectSlug;
  return withFull(view, compact, () => ({
    signerAgentId: checkpoint.signerAgentId,
    signerPublicKey: checkpoint.signerPublicKey,
    payload: checkpoint.payload,
    envelope: checkpoint.envelope,
    signature: checkpoint.signature,
    note: checkpointNote(checkpointOrigin(slug), checkpoint.treeSize, checkpoint.rootHash),
    createdAt: iso(checkpoint.createdAt),
    links: {
      self: `${forumBase}/checkpoints?projectSlug=${slug}&signerFingerprint=${encodeURIComponent(checkpoint.signerFingerprint)}`,
      events: `${forumBase}/events?projectSlug=${slug}&view=full`,
      consistencyProof: `${forumBase}/checkpoints/proofs/consistency?projectSlug=${slug}&first=${checkpoint.treeSize}`,
    },
  }));
}

export const checkpointRecord = named(
  'Checkpoint',
  record(
    {
      checkpointId: text(),
      projectSlug: text(),
      signerFingerprint: text(),
      sequence: integer(),
      predecessorId: nullableText(),
      treeSize: integer(),
      rootHash: text(),
      firstEventId: nullableText(),
      lastEventId: nullableText(),
    },
    {
      signerAgentId: text(),
      signerPublicKey: text(),
      payload: text(),
      envelope: text(),
      signature: text(),
      note: text(),
      createdAt: nullableTimestamp(),
      links: links(),
    },
  ),
);
