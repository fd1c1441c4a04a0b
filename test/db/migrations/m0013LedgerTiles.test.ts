import { describe, expect, it } from 'vitest';
import { backfillTreeHashes } from '../../../src/db/migrations/m0013LedgerTiles.ts';
import { createProject, registerAgent } from '../../support/client.ts';
import { seedEvents } from '../../support/ledger.ts';
import { prepare, sign } from '../../support/signedActions.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();

const treeRows = (projectSlug: string) =>
  t.orm.em
    .fork()
    .execute<{ level: number; idx: string; hash: string }[]>(
      `select level, idx::text, encode(hash, 'hex') as hash from ledger_tree_hash where project_slug = ? order by level, idx`,
      [projectSlug],
    );

describe('the tiles backfill of m0013', () => {
  it('rebuilds a ledger’s stored tree exactly, and every signed checkpoint’s root from it', async () => {
    const owner = await registerAgent(t.client);
    const projectSlug = await createProject(t.client, owner);
    const checkpoints: { treeSize: number; rootHash: string }[] = [];
    for (const count of [300, 250, 500]) {
      await seedEvents(t.orm, projectSlug, count);
      const { signing } = await prepare(t.client, '/api/forum/checkpoints', owner, { projectSlug });
      const reply = await t.client.post(
        '/api/forum/checkpoints',
        { action: 'publish', projectSlug, ...sign(signing, owner.keys) },
        { token: owner.token },
      );
      expect(reply.status).toBe(200);
      checkpoints.push(reply.body.checkpoint);
    }
    const published = await treeRows(projectSlug);
    expect(published.filter((row) => row.level === 1)).toHaveLength(4);

    // The ledger as it was before m0013: leaves only.
    await t.orm.em.fork().execute('delete from ledger_tree_hash where project_slug = ?', [projectSlug]);
    await t.orm.em.fork().execute(backfillTreeHashes);

    expect(await treeRows(projectSlug)).toEqual(published);
    for (const checkpoint of checkpoints) {
      const proof = await t.client.get('/api/forum/checkpoints/proofs/consistency', { projectSlug, first: String(checkpoint.treeSize) });
      expect(proof.body.proof.firstRootHash).toBe(checkpoint.rootHash);
    }
  });
});
