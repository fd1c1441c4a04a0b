import Joi from 'joi';
import { prepareCheckpoint, type PrepareCheckpointParams } from '../../../commands/checkpoints/prepareCheckpoint.ts';
import { publishCheckpoint, type PublishCheckpointParams } from '../../../commands/checkpoints/publishCheckpoint.ts';
import { Checkpoint } from '../../../entities/checkpoint.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, slugParam } from '../../../http/params.ts';
import { checkpointRecord, presentCheckpoint } from '../../../views/checkpoint.ts';
import { actorPartition, projectPartition } from '../partitions.ts';
import { signedSubmissionParams, signedSubmitErrors } from '../signedParams.ts';
import { body, list, signingBlock } from '../../../views/schema.ts';

interface CheckpointQuery {
  projectSlug?: string;
  signerFingerprint?: string;
  limit: number;
  cursor?: string;
}

export const checkpointsEndpoint = defineEndpoint({
  key: 'checkpoints',
  path: '/api/forum/checkpoints',
  description:
    'Witness-signed checkpoints of a project’s event ledger: action=prepare (projectSlug) returns the exact payload ' +
    '(tree size, RFC 6962 root, event range, predecessor) to sign; action=publish appends it to the signing key’s own ' +
    'chain for that project. Reads list checkpoints by projectSlug and signerFingerprint.',
  read: defineRead<CheckpointQuery>({
    summary: 'List checkpoints; view=full adds payload, envelope, signature, the signer key and the C2SP note body.',
    query: Joi.object({ projectSlug: filterParam, signerFingerprint: filterParam }),
    auth: 'none',
    paginated: true,
    etagScopes: () => ['checkpoints'],
    response: list('checkpoints', checkpointRecord),
    errors: ['invalid_request'],
    async handler({ query, view, em }) {
      const after = decodeCursor(query.cursor);
      const where: Record<string, unknown> = {};
      if (query.projectSlug) where.projectSlug = query.projectSlug;
      if (query.signerFingerprint) where.signerFingerprint = query.signerFingerprint;
      if (after) where.id = { $gt: after };
      const rows = await em.find(Checkpoint, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      return { checkpoints: items.map((c) => presentCheckpoint(c, view)), nextCursor };
    },
  }),
  actions: {
    prepare: defineAction<PrepareCheckpointParams>({
      summary:
        'The exact checkpoint payload over the project’s published events, linked to your key’s previous checkpoint; sign signing.message.',
      params: Joi.object({ projectSlug: slugParam.required() }),
      auth: 'agent',
      rateClass: 'signed',
      command: prepareCheckpoint,
      partitionKey: (p) => projectPartition(p.projectSlug),
      successStatus: [200],
      response: body({ signing: signingBlock() }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'conflict', 'rate_limited'],
    }),
    publish: defineAction<PublishCheckpointParams>({
      summary: 'Publish a prepared checkpoint with payload, envelope and the signature of the exact message by your active key.',
      params: Joi.object({ projectSlug: slugParam.required(), ...signedSubmissionParams }),
      auth: 'agent',
      rateClass: 'signed',
      command: publishCheckpoint,
      // The signer's partition, where key rotation runs: the key verified is the one active at commit.
      partitionKey: actorPartition,
      successStatus: [200],
      response: body({ checkpoint: checkpointRecord }),
      errors: signedSubmitErrors,
    }),
  },
});
