import Joi from 'joi';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError, notFound } from '../../../errors.ts';
import { defineEndpoint, defineRead, type ReadSpec } from '../../../http/endpoint.ts';
import { slugParam } from '../../../http/params.ts';
import { encodeHash } from '../../../ledger/leaf.ts';
import { consistencyAt, inclusionAt, logState, projectTreeSize, type LogState } from '../../../ledger/tree.ts';
import { body, integer, text } from '../../../views/schema.ts';
import { eventIdParam } from '../events/events.ts';

/**
 * Proofs over a project's Merkle tree, so a witness can check a checkpoint
 * without downloading every event again: an inclusion proof (RFC 6962
 * audit path) of one event in a tree size, and a consistency proof that one
 * tree size is a prefix of a larger one. Read-only; tree sizes default to the
 * current size. The ETag follows the project's tree size. Both read O(log n)
 * stored hashes of the project's tiles (src/ledger/tree.ts), at any size.
 */
const sizeParam = Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER);
const proofErrors = ['invalid_request', 'not_found'] as const;

/** The project's log and the tree size a proof is over: `size` when the ledger holds it, else the current size. */
async function sizeAt(
  em: EntityManager,
  query: { projectSlug: string; eventId?: string },
  size: number | undefined,
  field: string,
): Promise<{ log: LogState; size: number }> {
  const log = await logState(em, query.projectSlug, query.eventId);
  if (!log.known) throw notFound(`project ${query.projectSlug}`);
  if (size !== undefined && size > log.size) {
    throw new ApiError('invalid_request', `the tree of ${query.projectSlug} has ${log.size} leaves`, [
      { field, issue: `exceeds the current tree size ${log.size}` },
    ]);
  }
  return { log, size: size ?? log.size };
}

/** What both proof reads share: public, one record, an ETag that follows the project's tree size. */
function proofRead<Q extends { projectSlug: string }>(spec: Pick<ReadSpec<Q>, 'summary' | 'query' | 'handler' | 'response'>): ReadSpec<Q> {
  return defineRead<Q>({
    ...spec,
    auth: 'none',
    paginated: false,
    etagScopes: () => [],
    freshness: (ctx, q) => projectTreeSize(ctx.orm.em.fork(), q.projectSlug).then(String),
    errors: [...proofErrors],
  });
}

interface InclusionQuery {
  projectSlug: string;
  eventId: string;
  treeSize?: number;
}

export const inclusionProofEndpoint = defineEndpoint({
  key: 'checkpointInclusionProof',
  path: '/api/forum/checkpoints/proofs/inclusion',
  description: 'RFC 6962 inclusion proof of one event (eventId) in the tree of the project’s first treeSize events.',
  read: proofRead<InclusionQuery>({
    summary: 'Audit path of eventId in the project’s tree of treeSize leaves (default: current size).',
    query: Joi.object({ projectSlug: slugParam.required(), eventId: eventIdParam.required(), treeSize: sizeParam }),
    response: body({
      proof: body({
        projectSlug: text(),
        eventId: text(),
        leafIndex: integer(),
        treeSize: integer(),
        leafHash: text(),
        rootHash: text(),
        auditPath: Joi.array().items(text()),
      }),
    }),
    async handler({ query, em }) {
      const { log, size } = await sizeAt(em, query, query.treeSize, 'treeSize');
      const leaf = log.leaf && log.leaf.index < size ? log.leaf : null;
      if (!leaf) throw notFound(`event ${query.eventId} in the first ${size} events of ${query.projectSlug}`);
      const { root, path } = await inclusionAt(em, query.projectSlug, leaf.index, size);
      return {
        proof: {
          projectSlug: query.projectSlug,
          eventId: query.eventId,
          leafIndex: leaf.index,
          treeSize: size,
          leafHash: encodeHash(leaf.hash),
          rootHash: encodeHash(root),
          auditPath: path.map(encodeHash),
        },
      };
    },
  }),
});

interface ConsistencyQuery {
  projectSlug: string;
  first: number;
  second?: number;
}

export const consistencyProofEndpoint = defineEndpoint({
  key: 'checkpointConsistencyProof',
  path: '/api/forum/checkpoints/proofs/consistency',
  description: 'RFC 6962 consistency proof that the project’s tree of `first` events is a prefix of its tree of `second` events.',
  read: proofRead<ConsistencyQuery>({
    summary: 'Consistency path between tree sizes first and second (default: current size) of the project.',
    query: Joi.object({ projectSlug: slugParam.required(), first: sizeParam.required(), second: sizeParam }),
    response: body({
      proof: body({
        projectSlug: text(),
        first: integer(),
        second: integer(),
        firstRootHash: text(),
        secondRootHash: text(),
        consistencyPath: Joi.array().items(text()),
      }),
    }),
    async handler({ query, em }) {
      const { size: second } = await sizeAt(em, query, query.second, 'second');
      if (query.first > second) {
        throw new ApiError('invalid_request', 'first must not exceed second', [{ field: 'first', issue: `exceeds ${second}` }]);
      }
      const { firstRoot, secondRoot, path } = await consistencyAt(em, query.projectSlug, query.first, second);
      return {
        proof: {
          projectSlug: query.projectSlug,
          first: query.first,
          second,
          firstRootHash: encodeHash(firstRoot),
          secondRootHash: encodeHash(secondRoot),
          consistencyPath: path.map(encodeHash),
        },
      };
    },
  }),
});
