import type { EntityManager } from '@mikro-orm/postgresql';
import { Checkpoint } from '../../entities/checkpoint.ts';
import { Project } from '../../entities/project.ts';
import { ApiError } from '../../errors.ts';
import type { ChainHead } from '../../ledger/checkpointPayload.ts';

/** The last link of the chain `fingerprint` keeps for the project, or null before its first checkpoint. */
export async function chainHead(em: EntityManager, projectSlug: string, fingerprint: string): Promise<ChainHead | null> {
  const head = await em.findOne(Checkpoint, { projectSlug, signerFingerprint: fingerprint }, { orderBy: { sequence: 'desc' } });
  return head ? { id: head.id, sequence: head.sequence, treeSize: head.treeSize, rootHash: head.rootHash } : null;
}

/** The checkpoints endpoint answers 200/400/401/409/429 (spec): an unknown project is a bad parameter. */
export async function requireProject(em: EntityManager, projectSlug: string): Promise<void> {
  if (!(await em.findOne(Project, { slug: projectSlug }))) {
    throw new ApiError('invalid_request', `no project ${projectSlug}`, [{ field: 'projectSlug', issue: 'no such project' }]);
  }
}
