import { prepareSignedAction } from '../../crypto/signedAction.ts';
import { ApiError } from '../../errors.ts';
import { CHECKPOINT_ACTION, checkpointPayload } from '../../ledger/checkpointPayload.ts';
import { PUBLISH_BATCH, publishBatch } from '../../ledger/publication.ts';
import { projectTreeSize, treeHead } from '../../ledger/tree.ts';
import { agentById } from '../lookups.ts';
import { signerOf, signingBlock } from '../signing.ts';
import { defineCommand, ok } from '../types.ts';
import { chainHead, requireProject } from './chain.ts';

export interface PrepareCheckpointParams {
  projectSlug: string;
}

/**
 * The exact payload over the project's whole published tree, linked to the
 * caller's previous checkpoint. Pending outbox rows are published first
 * (waiting for a concurrent publisher rather than skipping), so the range
 * covers every event of the project committed before this command.
 */
export const prepareCheckpoint = defineCommand<PrepareCheckpointParams>({
  type: 'checkpoint.prepare',
  errors: ['invalid_request', 'conflict'],
  async handle({ em, params, now, actor }) {
    const agent = await agentById(em, actor().agentId);
    await requireProject(em, params.projectSlug);
    // Every pending row, however many: a full batch may leave this project's rows for the next.
    while ((await publishBatch(em, PUBLISH_BATCH, 'wait', now))?.count === PUBLISH_BATCH);
    const size = await projectTreeSize(em, params.projectSlug);
    if (size === 0) throw new ApiError('conflict', `project ${params.projectSlug} has no published events to checkpoint yet`);
    const tree = await treeHead(em, params.projectSlug, size);
    const payload = checkpointPayload(tree, await chainHead(em, params.projectSlug, agent.fingerprint));
    return ok({ signing: signingBlock(prepareSignedAction(CHECKPOINT_ACTION, signerOf(agent), { ...payload }, now)) });
  },
});
