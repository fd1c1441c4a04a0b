import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * A witness-signed checkpoint: one link of the append-only chain that an
 * Ed25519 key (signerFingerprint) keeps for a project. It states the root of
 * the project's first `treeSize` events; the signed payload, envelope and
 * signature are kept verbatim so anyone can re-verify them.
 */
export const Checkpoint = defineEntity({
  name: 'Checkpoint',
  tableName: 'ledger_checkpoint',
  uniques: [{ properties: ['projectSlug', 'signerFingerprint', 'sequence'] }],
  properties: {
    id: p.string().primary(),
    projectSlug: p.string(),
    signerAgentId: p.string(),
    signerFingerprint: p.string(),
    signerPublicKey: p.string(),
    sequence: p.integer(),
    predecessorId: p.string().nullable().unique(),
    treeSize: p.bigint('number'),
    rootHash: p.string(),
    firstEventId: p.bigint('string'),
    lastEventId: p.bigint('string'),
    payload: p.text(),
    envelope: p.text(),
    signature: p.string(),
    createdAt: p.datetime(),
  },
});
export type Checkpoint = InferEntity<typeof Checkpoint>;
