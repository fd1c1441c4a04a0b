import Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Checkpoint } from '../../../entities/checkpoint.ts';
import { Project } from '../../../entities/project.ts';
import { notFound } from '../../../errors.ts';
import { defineEndpoint, defineFile } from '../../../http/endpoint.ts';
import { slugParam } from '../../../http/params.ts';
import { checkpointOrigin } from '../../../ledger/checkpointPayload.ts';
import { signedCheckpointNote } from '../../../ledger/signedNote.ts';
import { entriesAtLevel, parseTilePath, TILE_WIDTH } from '../../../ledger/tiles.ts';
import { logState, tileBytes } from '../../../ledger/tree.ts';

/**
 * Each project's ledger as a C2SP tlog-tiles log under
 * /api/forum/logs/{projectSlug}: its latest signed checkpoint as a signed
 * note, and the tiles of its Merkle tree, so a verifier computes any proof
 * itself from O(log n) hashes and a CDN can keep every full tile forever.
 */
const FULL_TILE = 'public, max-age=31536000, immutable';
/** A partial tile's bytes never change either, but a full one replaces it soon: clients are asked to come back for that. */
const PARTIAL_TILE = 'public, max-age=10';
const CHECKPOINT = 'public, no-cache';

async function requireProject(em: EntityManager, projectSlug: string): Promise<void> {
  if (!(await em.findOne(Project, { slug: projectSlug }, { fields: ['slug'] }))) throw notFound(`log ${projectSlug}`);
}

export const logCheckpointEndpoint = defineEndpoint({
  key: 'logCheckpoint',
  path: '/api/forum/logs/{projectSlug}/checkpoint',
  description:
    'The project’s latest witness-signed checkpoint as a C2SP signed note (docs/witness.md): the note body the ' +
    'checkpoints endpoint returns, then one signature line per key that signed that same tree.',
  file: defineFile<{ projectSlug: string }>({
    summary: 'The latest signed checkpoint of the project’s log, as a C2SP signed note.',
    params: Joi.object({ projectSlug: slugParam.required() }),
    contentType: 'text/plain; charset=utf-8',
    errors: ['invalid_request', 'not_found'],
    async handler({ params, em }) {
      await requireProject(em, params.projectSlug);
      const [latest] = await em.find(
        Checkpoint,
        { projectSlug: params.projectSlug },
        { orderBy: { treeSize: 'desc', id: 'desc' }, limit: 1 },
      );
      if (!latest) throw notFound(`a signed checkpoint of ${params.projectSlug}`);
      const cosigners = await em.find(
        Checkpoint,
        { projectSlug: params.projectSlug, treeSize: latest.treeSize, rootHash: latest.rootHash },
        { orderBy: { id: 'asc' } },
      );
      const note = signedCheckpointNote(checkpointOrigin(params.projectSlug), latest.treeSize, latest.rootHash, cosigners);
      return { body: Buffer.from(note), cacheControl: CHECKPOINT };
    },
  }),
});

export const logTileEndpoint = defineEndpoint({
  key: 'logTile',
  path: '/api/forum/logs/{projectSlug}/tile/{tilePath*}',
  description:
    'A tile of the project’s Merkle tree per C2SP tlog-tiles: tile/<L>/<N>[.p/<W>], N in three-digit groups ' +
    '(x001/x234/067), the 32-byte hashes of up to 256 consecutive complete subtrees of 256^L leaves (L = 0: the leaf ' +
    'hashes). A full tile is immutable; a partial one (.p/W) is the first W hashes of a tile still growing.',
  file: defineFile<{ projectSlug: string; tilePath: string }>({
    summary: 'Hashes of one tile of the project’s tree, 32 bytes each.',
    params: Joi.object({ projectSlug: slugParam.required(), tilePath: Joi.string().max(100).required() }),
    contentType: 'application/octet-stream',
    errors: ['invalid_request', 'not_found'],
    async handler({ params, em }) {
      const address = parseTilePath(params.tilePath);
      if (!address) throw notFound(`tile ${params.tilePath} (tile/<L>/<N>[.p/<W>], N in three-digit groups)`);
      const log = await logState(em, params.projectSlug);
      if (!log.known) throw notFound(`log ${params.projectSlug}`);
      const held = entriesAtLevel(log.size, address.level);
      if (address.index * TILE_WIDTH + address.width > held) throw notFound(`tile ${params.tilePath}: the tree does not hold it yet`);
      const body = await tileBytes(em, params.projectSlug, address);
      return { body, cacheControl: address.width === TILE_WIDTH ? FULL_TILE : PARTIAL_TILE };
    },
  }),
});
