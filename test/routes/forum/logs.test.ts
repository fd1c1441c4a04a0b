import { createHash, createPublicKey, verify } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeHash } from '../../../src/ledger/leaf.ts';
import { consistencyProof, inclusionProof, rootHash, type Hash } from '../../../src/ledger/merkle.ts';
import { createProject, registerAgent, type TestAgent } from '../../support/client.ts';
import { hashOf, leavesOf, seedEvents } from '../../support/ledger.ts';
import { prepare, sign, type Signing } from '../../support/signedActions.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();

/** Raw bytes, as a tlog client reads a tile or a note (not JSON). */
async function fetchLog(projectSlug: string, rest: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${t.client.base}/api/forum/logs/${projectSlug}/${rest}`, { headers });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

const hashesIn = (bytes: Buffer): Hash[] => Array.from({ length: bytes.length / 32 }, (_, i) => bytes.subarray(i * 32, (i + 1) * 32));

async function signedCheckpoint(agent: TestAgent, projectSlug: string): Promise<Record<string, any>> {
  const { signing } = await prepare(t.client, '/api/forum/checkpoints', agent, { projectSlug });
  return publishSigned(agent, projectSlug, signing);
}

async function publishSigned(agent: TestAgent, projectSlug: string, signing: Signing): Promise<Record<string, any>> {
  const reply = await t.client.post(
    '/api/forum/checkpoints',
    { action: 'publish', projectSlug, ...sign(signing, agent.keys) },
    { token: agent.token },
  );
  if (reply.status !== 200) throw new Error(`publish failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.checkpoint;
}

/** A project of 601 events: two full level-0 tiles and a partial one of 89. */
async function projectOf601(): Promise<{ owner: TestAgent; projectSlug: string }> {
  const owner = await registerAgent(t.client);
  const projectSlug = await createProject(t.client, owner);
  await seedEvents(t.orm, projectSlug, 600);
  return { owner, projectSlug };
}

describe('a project’s log as C2SP tiles', () => {
  let owner: TestAgent;
  let projectSlug: string;
  beforeAll(async () => {
    ({ owner, projectSlug } = await projectOf601());
  });

  it('serves level-0 tiles whose hashes recompute the root its signed checkpoint states', async () => {
    const checkpoint = await signedCheckpoint(owner, projectSlug);
    expect(checkpoint.treeSize).toBe(601);
    const tiles = await Promise.all(['tile/0/000', 'tile/0/001', 'tile/0/002.p/89'].map((path) => fetchLog(projectSlug, path)));
    expect(tiles.map((tile) => tile.status)).toEqual([200, 200, 200]);
    expect(tiles.map((tile) => tile.bytes.length)).toEqual([256 * 32, 256 * 32, 89 * 32]);
    expect(tiles[0]!.headers.get('content-type')).toBe('application/octet-stream');
    expect(encodeHash(rootHash(tiles.flatMap((tile) => hashesIn(tile.bytes))))).toBe(checkpoint.rootHash);
  });

  it('marks a full tile immutable and a partial one short-lived', async () => {
    expect((await fetchLog(projectSlug, 'tile/0/000')).headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetchLog(projectSlug, 'tile/0/002.p/89')).headers.get('cache-control')).toBe('public, max-age=10');
  });

  it('serves level-1 entries that are the roots of each full level-0 tile', async () => {
    const { leaves } = await leavesOf(t.client, projectSlug);
    const tile = await fetchLog(projectSlug, 'tile/1/000.p/2');
    expect(tile.status).toBe(200);
    expect(hashesIn(tile.bytes)).toEqual([rootHash(leaves.slice(0, 256)), rootHash(leaves.slice(256, 512))].map((h) => Buffer.from(h)));
  });

  it('answers a tile asked again with its ETag 304', async () => {
    const first = await fetchLog(projectSlug, 'tile/0/001');
    const again = await fetchLog(projectSlug, 'tile/0/001', { 'if-none-match': first.headers.get('etag')! });
    expect(again.status).toBe(304);
  });

  it('answers 404 with the contract’s error body for a tile not held yet, a non-canonical path or an unknown project', async () => {
    for (const [slug, path] of [
      [projectSlug, 'tile/0/002'],
      [projectSlug, 'tile/0/002.p/200'],
      [projectSlug, 'tile/1/000'],
      [projectSlug, 'tile/0/2'],
      [projectSlug, 'tile/0/x000/001'],
      [projectSlug, 'tile/entries/000'],
      ['no-such-project', 'tile/0/000.p/1'],
    ] as const) {
      const reply = await fetchLog(slug, path);
      expect(reply.status, path).toBe(404);
      expect(JSON.parse(reply.bytes.toString()), path).toMatchObject({ ok: false, error: { code: 'not_found' } });
    }
  });
});

describe('a project’s log checkpoint', () => {
  it('is the latest signed checkpoint as a C2SP signed note, one signature line per key that signed that tree', async () => {
    const { owner, projectSlug } = await projectOf601();
    const witness = await registerAgent(t.client);
    // Both prepared before either is published: a publication is itself an event, which would grow the tree.
    const prepared = await Promise.all(
      [owner, witness].map((agent) => prepare(t.client, '/api/forum/checkpoints', agent, { projectSlug })),
    );
    const signed = [];
    for (const [i, agent] of [owner, witness].entries()) signed.push(await publishSigned(agent, projectSlug, prepared[i]!.signing));
    const reply = await fetchLog(projectSlug, 'checkpoint');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const [body, signatures] = reply.bytes.toString('utf8').split('\n\n') as [string, string];
    expect(`${body}\n`).toBe(`agora/${projectSlug}\n601\n${signed[0]!.rootHash}\n`);
    const lines = signatures.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    const full = await t.client.get('/api/forum/checkpoints', { projectSlug, view: 'full' });
    for (const [i, line] of lines.entries()) {
      const stored = full.body.checkpoints[i];
      const [dash, name, encoded] = line.split(' ') as [string, string, string];
      expect([dash, name]).toEqual(['—', `agora/${projectSlug}/${stored.signerFingerprint}`]);
      const bytes = Buffer.from(encoded, 'base64');
      const publicKey = Buffer.from(stored.signerPublicKey, 'base64url');
      const keyId = createHash('sha256')
        .update(`${name}\n`)
        .update(Buffer.from([0xff]))
        .update('agora-checkpoint-envelope/v1')
        .update(publicKey)
        .digest();
      expect(bytes.subarray(0, 4)).toEqual(keyId.subarray(0, 4));
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: stored.signerPublicKey }, format: 'jwk' });
      expect(verify(null, Buffer.from(stored.envelope, 'base64url'), key, bytes.subarray(4))).toBe(true);
    }
  });

  it('answers 404 while the project has no signed checkpoint', async () => {
    const owner = await registerAgent(t.client);
    const projectSlug = await createProject(t.client, owner);
    const reply = await fetchLog(projectSlug, 'checkpoint');
    expect(reply.status).toBe(404);
  });
});

describe('proofs over a tree of several tiles', () => {
  it('match the whole-tree proofs for leaves and sizes across tile boundaries', async () => {
    const { projectSlug } = await projectOf601();
    const { events, leaves } = await leavesOf(t.client, projectSlug);
    for (const [index, size] of [
      [0, 601],
      [255, 256],
      [256, 257],
      [511, 600],
      [600, 601],
      [300, 512],
    ] as const) {
      const reply = await t.client.get('/api/forum/checkpoints/proofs/inclusion', {
        projectSlug,
        eventId: events[index]!.eventId,
        treeSize: String(size),
      });
      expect(reply.body.proof.auditPath.map(hashOf), `${index}@${size}`).toEqual(
        inclusionProof(leaves, index, size).map((h) => Buffer.from(h)),
      );
    }
    for (const [first, second] of [
      [1, 601],
      [256, 601],
      [255, 513],
      [512, 600],
      [300, 301],
    ] as const) {
      const reply = await t.client.get('/api/forum/checkpoints/proofs/consistency', {
        projectSlug,
        first: String(first),
        second: String(second),
      });
      expect(reply.body.proof.consistencyPath.map(hashOf), `${first}->${second}`).toEqual(
        consistencyProof(leaves, first, second).map((h) => Buffer.from(h)),
      );
    }
  });
});
