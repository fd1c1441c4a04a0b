import { describe, expect, it } from 'vitest';
import { Agora, generateKeys, verifyProject } from '../../sdk/src/index.ts';
import { unique } from '../support/client.ts';
import { seedEvents } from '../support/ledger.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();

/** A witness and a project of 600 seeded events besides its creation: tiles 0/000 and 0/001 full, a partial above them. */
async function bigProject(): Promise<{ agora: Agora; projectSlug: string }> {
  const { agora } = await Agora.register({ baseUrl: t.client.base, handle: unique('tiles-'), keys: await generateKeys() });
  const project = await agora.createProject({ slug: unique('tiles-'), name: 'Tiled' });
  await seedEvents(t.orm, project.slug, 600);
  return { agora, projectSlug: project.slug };
}

/** A fetch that records every tile path asked for, and lets a test change a tile's bytes on the way. */
function recordingFetch(alter: (path: string, bytes: Uint8Array) => void = () => {}) {
  const tiles: string[] = [];
  const send: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const path = /\/tile\/(.+)$/.exec(String(input))?.[1];
    if (!path || response.status !== 200) return response;
    tiles.push(path);
    const bytes = new Uint8Array(await response.arrayBuffer());
    alter(path, bytes);
    return new Response(bytes, { status: 200, headers: response.headers });
  };
  return { tiles, send };
}

describe('verifyProject on the service’s tiles', () => {
  it('checks the tiles against the events and every checkpoint’s root and proofs computed from them', { timeout: 120_000 }, async () => {
    const { agora, projectSlug } = await bigProject();
    const first = await agora.publishCheckpoint(projectSlug);
    await seedEvents(t.orm, projectSlug, 20);
    const second = await agora.publishCheckpoint(projectSlug);
    expect([first.treeSize, second.treeSize]).toEqual([601, 622]);
    const { tiles, send } = recordingFetch();
    const report = await verifyProject(t.client.base, projectSlug, send);
    expect(report).toMatchObject({ failures: [], events: 623, checkpoints: 2, chains: 1, tiles: { treeSize: 623, tiles: 4 } });
    expect(tiles).toEqual(['0/000', '0/001', '0/002.p/111', '1/000.p/2']);
  });

  it('names a tile the service altered and the checkpoint whose root its tiles no longer give', { timeout: 120_000 }, async () => {
    const { agora, projectSlug } = await bigProject();
    const checkpoint = await agora.publishCheckpoint(projectSlug);
    const { send } = recordingFetch((path, bytes) => {
      if (path === '1/000.p/2') bytes[40] = (bytes[40]! + 1) % 256;
    });
    const report = await verifyProject(t.client.base, projectSlug, send);
    expect(report.failures).toEqual([
      'tile 1/000.p/2: entry 1 differs from the root of the 256 entries below it',
      `checkpoint ${checkpoint.checkpointId}: its root differs from the root of the first 601 leaves computed from tiles`,
      `checkpoint ${checkpoint.checkpointId}: inclusion proof of event ${checkpoint.lastEventId} computed from tiles fails`,
    ]);
  });
});

describe('agora.followLog', () => {
  it('proves each new checkpoint extends the last, fetching only the tiles the tree grew into', { timeout: 120_000 }, async () => {
    const { agora, projectSlug } = await bigProject();
    await agora.publishCheckpoint(projectSlug);
    const follower = agora.followLog(projectSlug);
    const first = await follower.update();
    expect(first).toMatchObject({ treeSize: 601, previousSize: 0, signers: [expect.stringMatching(/^SHA256:/)] });
    // The root of 601 leaves: two level-1 entries and the partial level-0 tile; the full tiles below are not needed.
    expect(first.fetched.toSorted()).toEqual(['0/002.p/89', '1/000.p/2']);

    await seedEvents(t.orm, projectSlug, 300);
    await agora.publishCheckpoint(projectSlug);
    const grown = await follower.update();
    expect(grown).toMatchObject({ treeSize: 902, previousSize: 601 });
    // Tile 0/002 is full now: the consistency proof from 601 reads inside it, so it is fetched, once.
    expect(grown.fetched.toSorted()).toEqual(['0/002', '0/003.p/134', '1/000.p/3']);

    await seedEvents(t.orm, projectSlug, 3);
    await agora.publishCheckpoint(projectSlug);
    const again = await follower.update();
    expect(again).toMatchObject({ treeSize: 906, previousSize: 902 });
    // Only the level-0 partial grew (134 -> 138); the full tiles and the level-1 partial of 3 entries are held.
    expect(again.fetched).toEqual(['0/003.p/138']);
    expect((await follower.update()).fetched).toEqual([]);
  });
});
