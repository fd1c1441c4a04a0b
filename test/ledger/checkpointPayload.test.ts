import { describe, expect, it } from 'vitest';
import {
  CHECKPOINT_ACTION,
  CHECKPOINT_FORMAT,
  checkpointNote,
  checkpointOrigin,
  checkpointPayload,
  checkpointPayloadSchema,
  type CheckpointPayload,
} from '../../src/ledger/checkpointPayload.ts';
import { encodeHash } from '../../src/ledger/leaf.ts';
import { leafHash, rootHash } from '../../src/ledger/merkle.ts';
import type { TreeHead } from '../../src/ledger/tree.ts';

const leaves = ['a', 'b', 'c'].map((leaf) => leafHash(leaf));
const tree: TreeHead = { projectSlug: 'garden', size: 3, root: rootHash(leaves), firstEventId: '7', lastEventId: '12' };
const root = encodeHash(rootHash(leaves));
const head = { id: 'ckp_1', sequence: 4, treeSize: 2, rootHash: encodeHash(rootHash(leaves.slice(0, 2))) };

const validPayload = (): CheckpointPayload => checkpointPayload(tree, head);
const problems = (overrides: Record<string, unknown>): string[] =>
  checkpointPayloadSchema
    .validate({ ...validPayload(), ...overrides }, { abortEarly: false })
    .error?.details.map((d) => d.path.join('.')) ?? [];

describe('checkpoint payload', () => {
  it('is signed under the action name witnesses check for (sdk/src/verify.ts)', () => {
    expect(CHECKPOINT_ACTION).toBe('checkpoint.publish');
  });

  it('names the project in a host-agnostic origin', () => {
    expect(checkpointOrigin('garden')).toBe('agora/garden');
  });

  it('writes the note as origin, size and root on lines of their own', () => {
    expect(checkpointNote('agora/garden', 3, 'ROOT=')).toBe('agora/garden\n3\nROOT=\n');
  });

  it('starts a chain at sequence 1 without a predecessor', () => {
    expect(checkpointPayload(tree, null)).toEqual({
      format: 'agora-checkpoint/v1',
      origin: 'agora/garden',
      projectSlug: 'garden',
      treeSize: 3,
      rootHash: root,
      firstEventId: '7',
      lastEventId: '12',
      sequence: 1,
      predecessor: null,
      note: `agora/garden\n3\n${root}\n`,
    });
  });

  it('links to the head of the signer’s chain and follows its sequence', () => {
    const payload = checkpointPayload(tree, head);
    expect(payload.sequence).toBe(5);
    expect(payload.predecessor).toEqual({ checkpointId: 'ckp_1', treeSize: 2, rootHash: head.rootHash });
  });

  it('states a prefix of the tree as its head gives it: size, root and last event', () => {
    const prefix = { ...tree, size: 2, root: rootHash(leaves.slice(0, 2)), lastEventId: '9' };
    const payload = checkpointPayload(prefix, null);
    expect([payload.treeSize, payload.rootHash, payload.lastEventId]).toEqual([2, head.rootHash, '9']);
    expect(payload.note).toBe(`agora/garden\n2\n${head.rootHash}\n`);
  });
});

describe('checkpoint payload schema', () => {
  it('accepts the payload the service prepares, with or without a predecessor', () => {
    expect(checkpointPayloadSchema.validate(validPayload()).error).toBeUndefined();
    expect(checkpointPayloadSchema.validate(checkpointPayload(tree, null)).error).toBeUndefined();
  });

  it('refuses another format', () => {
    expect(CHECKPOINT_FORMAT).toBe('agora-checkpoint/v1');
    expect(problems({ format: 'agora-checkpoint/v2' })).toEqual(['format']);
  });

  it('requires every field, the predecessor included', () => {
    const { predecessor: _, ...withoutPredecessor } = validPayload();
    expect(checkpointPayloadSchema.validate(withoutPredecessor).error?.details.map((d) => d.path.join('.'))).toEqual(['predecessor']);
    for (const field of ['format', 'origin', 'projectSlug', 'treeSize', 'rootHash', 'firstEventId', 'lastEventId', 'sequence', 'note']) {
      const payload: Record<string, unknown> = { ...validPayload() };
      delete payload[field];
      expect(
        checkpointPayloadSchema.validate(payload).error?.details.map((d) => d.path.join('.')),
        field,
      ).toEqual([field]);
    }
  });

  it('bounds the origin to 100 characters, the slug to 64 and the note to 300', () => {
    expect(problems({ origin: 'o'.repeat(100), projectSlug: 's'.repeat(64), note: 'n'.repeat(300) })).toEqual([]);
    expect(problems({ origin: 'o'.repeat(101), projectSlug: 's'.repeat(65), note: 'n'.repeat(301) })).toEqual([
      'origin',
      'projectSlug',
      'note',
    ]);
  });

  it('takes a tree size from 1 to the largest safe integer', () => {
    expect(problems({ treeSize: 1 })).toEqual([]);
    expect(problems({ treeSize: Number.MAX_SAFE_INTEGER })).toEqual([]);
    expect(problems({ treeSize: 0 })).toEqual(['treeSize']);
    expect(problems({ treeSize: 1.5 })).toEqual(['treeSize']);
    expect(problems({ treeSize: Number.MAX_SAFE_INTEGER + 2 })).toEqual(['treeSize']);
  });

  it('takes a sequence from 1 to the largest Postgres integer', () => {
    expect(problems({ sequence: 1 })).toEqual([]);
    expect(problems({ sequence: 2 ** 31 - 1 })).toEqual([]);
    expect(problems({ sequence: 0 })).toEqual(['sequence']);
    expect(problems({ sequence: 2 ** 31 })).toEqual(['sequence']);
    expect(problems({ sequence: 2.5 })).toEqual(['sequence']);
  });

  it('takes ledger event ids of 1 to 18 digits without a leading zero', () => {
    expect(problems({ firstEventId: '1', lastEventId: '9'.repeat(18) })).toEqual([]);
    expect(problems({ firstEventId: '0', lastEventId: '1'.repeat(19) })).toEqual(['firstEventId', 'lastEventId']);
    expect(problems({ firstEventId: '07', lastEventId: '12a' })).toEqual(['firstEventId', 'lastEventId']);
    expect(problems({ firstEventId: 'x1', lastEventId: '' })).toEqual(['firstEventId', 'lastEventId']);
  });

  it('takes a root hash only as 32 bytes of padded standard base64', () => {
    expect(problems({ rootHash: root.slice(0, -1) })).toEqual(['rootHash']);
    expect(problems({ rootHash: `-${root.slice(1)}` })).toEqual(['rootHash']);
    expect(problems({ rootHash: `x${root}` })).toEqual(['rootHash']);
    expect(problems({ rootHash: `${root}x` })).toEqual(['rootHash']);
  });

  it('checks the predecessor link’s id, size and root', () => {
    const link = validPayload().predecessor!;
    expect(problems({ predecessor: { ...link, checkpointId: 'c'.repeat(64) } })).toEqual([]);
    expect(problems({ predecessor: { ...link, checkpointId: 'c'.repeat(65) } })).toEqual(['predecessor.checkpointId']);
    expect(problems({ predecessor: { ...link, treeSize: 0 } })).toEqual(['predecessor.treeSize']);
    expect(problems({ predecessor: { ...link, rootHash: 'short=' } })).toEqual(['predecessor.rootHash']);
    expect(problems({ predecessor: { treeSize: 1, rootHash: link.rootHash } })).toEqual(['predecessor.checkpointId']);
    expect(problems({ predecessor: { checkpointId: 'c', rootHash: link.rootHash } })).toEqual(['predecessor.treeSize']);
    expect(problems({ predecessor: { checkpointId: 'c', treeSize: 1 } })).toEqual(['predecessor.rootHash']);
  });
});
