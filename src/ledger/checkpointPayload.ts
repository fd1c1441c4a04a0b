import Joi from 'joi';
import { encodeHash } from './leaf.ts';
import type { TreeHead } from './tree.ts';

/**
 * The payload a witness signs for a checkpoint: the project's first
 * `treeSize` ledger events (eventIds firstEventId..lastEventId of that
 * project), their RFC 6962 root, and the link to the previous checkpoint of
 * the same key for the same project. `note` is the same statement as a
 * C2SP tlog-checkpoint note body (origin, size, base64 root, one per line),
 * so tlog tooling can cosign or compare it.
 */
export const CHECKPOINT_ACTION = 'checkpoint.publish';
export const CHECKPOINT_FORMAT = 'agora-checkpoint/v1';

export interface CheckpointLink {
  checkpointId: string;
  treeSize: number;
  rootHash: string;
}

export interface CheckpointPayload {
  format: typeof CHECKPOINT_FORMAT;
  origin: string;
  projectSlug: string;
  treeSize: number;
  rootHash: string;
  firstEventId: string;
  lastEventId: string;
  sequence: number;
  predecessor: CheckpointLink | null;
  note: string;
}

/** The predecessor as stored: the signer's latest checkpoint for the project. */
export interface ChainHead {
  id: string;
  sequence: number;
  treeSize: number;
  rootHash: string;
}

/** Host-agnostic origin line: the same project on any deployment address has the same origin. */
export function checkpointOrigin(projectSlug: string): string {
  return `agora/${projectSlug}`;
}

export function checkpointNote(origin: string, treeSize: number, root: string): string {
  return `${origin}\n${treeSize}\n${root}\n`;
}

/** The exact payload for `tree` (non-empty) following `head` in the signer's chain. */
export function checkpointPayload(tree: TreeHead, head: ChainHead | null): CheckpointPayload {
  const root = encodeHash(tree.root);
  const origin = checkpointOrigin(tree.projectSlug);
  return {
    format: CHECKPOINT_FORMAT,
    origin,
    projectSlug: tree.projectSlug,
    treeSize: tree.size,
    rootHash: root,
    firstEventId: tree.firstEventId,
    lastEventId: tree.lastEventId,
    sequence: (head?.sequence ?? 0) + 1,
    predecessor: head ? { checkpointId: head.id, treeSize: head.treeSize, rootHash: head.rootHash } : null,
    note: checkpointNote(origin, tree.size, root),
  };
}

const eventId = Joi.string().pattern(/^[1-9][0-9]{0,17}$/);
const hash = Joi.string().pattern(/^[A-Za-z0-9+/]{43}=$/);
const size = Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER);

/** Shape only; whether the values are the ledger's is checked against the database. */
export const checkpointPayloadSchema = Joi.object<CheckpointPayload>({
  format: Joi.string().valid(CHECKPOINT_FORMAT).required(),
  origin: Joi.string().max(100).required(),
  projectSlug: Joi.string().max(64).required(),
  treeSize: size.required(),
  rootHash: hash.required(),
  firstEventId: eventId.required(),
  lastEventId: eventId.required(),
  sequence: Joi.number()
    .integer()
    .min(1)
    .max(2 ** 31 - 1)
    .required(),
  predecessor: Joi.object<CheckpointLink>({
    checkpointId: Joi.string().max(64).required(),
    treeSize: size.required(),
    rootHash: hash.required(),
  })
    .allow(null)
    .required(),
  note: Joi.string().max(300).required(),
});
