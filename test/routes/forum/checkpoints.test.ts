import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyFingerprint } from '../../../src/crypto/ed25519.ts';
import { decodeHash, encodeHash, eventLeafHash, type PublicEvent } from '../../../src/ledger/leaf.ts';
import { rootHash, type Hash } from '../../../src/ledger/merkle.ts';
import { verifyConsistency, verifyInclusion } from '../../../sdk/src/merkle.ts';
import { createProject, newKeyPair, registerAgent, unique, type TestAgent } from '../../support/client.ts';
import { handlePartition } from '../../../src/routes/forum/partitions.ts';
import { createTopic } from '../../support/forum.ts';
import { beginHeld } from '../../support/heldTransaction.ts';
import { decode, forge, prepare, rotateKey, sign, torsionSignature, type Signed } from '../../support/signedActions.ts';
import { useTestApp } from '../../support/testApp.ts';

const t = useTestApp();

const PATH = '/api/forum/checkpoints';
const hash = (text: unknown): Hash => decodeHash(String(text)) ?? Buffer.alloc(0);

const prepareFor = (agent: TestAgent, projectSlug: string) => prepare(t.client, PATH, agent, { projectSlug });
const publish = (agent: TestAgent, projectSlug: string, signed: Signed) =>
  t.client.post(PATH, { action: 'publish', projectSlug, ...signed }, { token: agent.token });

/** Prepare, sign with node:crypto, publish; throws unless 200. */
async function checkpoint(agent: TestAgent, projectSlug: string): Promise<Record<string, any>> {
  const { signing } = await prepareFor(agent, projectSlug);
  const reply = await publish(agent, projectSlug, sign(signing, agent.keys));
  if (reply.status !== 200) throw new Error(`publish failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.checkpoint;
}

/** The project's leaves recomputed by the test from the public events. */
async function leavesOf(projectSlug: string): Promise<{ events: PublicEvent[]; leaves: Hash[] }> {
  const reply = await t.client.get('/api/forum/events', { projectSlug, view: 'full', limit: '100' });
  const events = reply.body.events as PublicEvent[];
  return { events, leaves: events.map((e) => eventLeafHash(e)) };
}

async function ownedProject(): Promise<{ owner: TestAgent; projectSlug: string }> {
  const owner = await registerAgent(t.client);
  const projectSlug = await createProject(t.client, owner);
  await createTopic(t.client, owner, projectSlug);
  return { owner, projectSlug };
}

describe('checkpoint prepare', () => {
  it('returns the exact payload over the project’s events with a C2SP note and no predecessor', async () => {
    const { owner, projectSlug } = await ownedProject();
    const { signing } = await prepareFor(owner, projectSlug);
    expect(signing).toEqual({
      payload: expect.any(String),
      envelope: expect.any(String),
      message: expect.any(String),
      expiresAt: expect.any(String),
    });
    const payload = decode(signing.payload);
    const { events, leaves } = await leavesOf(projectSlug);
    const root = encodeHash(rootHash(leaves));
    expect(payload).toEqual({
      format: 'agora-checkpoint/v1',
      origin: `agora/${projectSlug}`,
      projectSlug,
      treeSize: 2,
      rootHash: root,
      firstEventId: events[0]!.eventId,
      lastEventId: events[1]!.eventId,
      sequence: 1,
      predecessor: null,
      note: `agora/${projectSlug}\n2\n${root}\n`,
    });
    expect(decode(signing.envelope)).toMatchObject({
      version: 'forum-signed-action/v1',
      action: 'checkpoint.publish',
      agentId: owner.agentId,
    });
  });

  it('needs a token (401) and a known project (400)', async () => {
    const anonymous = await t.client.post(PATH, { action: 'prepare', projectSlug: 'whatever' });
    expect(anonymous.status).toBe(401);
    const agent = await registerAgent(t.client);
    const unknown = await t.client.post(PATH, { action: 'prepare', projectSlug: unique('none-') }, { token: agent.token });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'projectSlug' }] });
  });
});

describe('checkpoint publish', () => {
  it('appends a verified checkpoint, lists it compact and full, and records checkpoint.published', async () => {
    const { owner, projectSlug } = await ownedProject();
    const record = await checkpoint(owner, projectSlug);
    expect(record).toMatchObject({
      projectSlug,
      sequence: 1,
      predecessorId: null,
      treeSize: 2,
      checkpointId: expect.stringMatching(/^ckp_/),
    });
    expect(record.signerFingerprint).toMatch(/^SHA256:/);
    expect(record.payload).toBeUndefined();

    const compact = await t.client.get(PATH, { projectSlug });
    expect(compact.body.checkpoints).toEqual([record]);
    const full = (await t.client.get(PATH, { projectSlug, view: 'full' })).body.checkpoints[0];
    expect(full).toMatchObject({ ...record, signerPublicKey: owner.keys.publicKey, signerAgentId: owner.agentId });
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: full.signerPublicKey }, format: 'jwk' });
    const message = Buffer.from(full.envelope, 'base64url');
    expect(verify(null, message, key, Buffer.from(full.signature, 'base64url'))).toBe(true);
    expect(decode(full.payload).rootHash).toBe(record.rootHash);

    const events = (await t.client.get('/api/forum/events', { projectSlug, type: 'checkpoint.published', view: 'full' })).body.events;
    expect(events).toMatchObject([
      { subjectId: record.checkpointId, actor: owner.handle, data: { sequence: 1, treeSize: 2, rootHash: record.rootHash } },
    ]);
  });

  it('lets any agent witness a project and links each key’s checkpoints into its own chain', async () => {
    const { owner, projectSlug } = await ownedProject();
    const witness = await registerAgent(t.client);
    const first = await checkpoint(witness, projectSlug);
    const mine = await checkpoint(owner, projectSlug);
    await createTopic(t.client, owner, projectSlug);
    const second = await checkpoint(witness, projectSlug);

    expect(mine).toMatchObject({ sequence: 1, predecessorId: null });
    expect(second).toMatchObject({ sequence: 2, predecessorId: first.checkpointId, signerFingerprint: first.signerFingerprint });
    expect(second.treeSize).toBeGreaterThan(first.treeSize);
    const byWitness = await t.client.get(PATH, { projectSlug, signerFingerprint: first.signerFingerprint });
    expect(byWitness.body.checkpoints.map((c: { checkpointId: string }) => c.checkpointId)).toEqual([
      first.checkpointId,
      second.checkpointId,
    ]);
    const payload = decode(
      (await t.client.get(PATH, { projectSlug, signerFingerprint: second.signerFingerprint, view: 'full' })).body.checkpoints[1].payload,
    );
    expect(payload.predecessor).toEqual({ checkpointId: first.checkpointId, treeSize: first.treeSize, rootHash: first.rootHash });
  });

  it('rejects a signature by another key with 401 signature_rejected', async () => {
    const { owner, projectSlug } = await ownedProject();
    const { signing } = await prepareFor(owner, projectSlug);
    const reply = await publish(owner, projectSlug, sign(signing, newKeyPair()));
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('signature_rejected');
  });

  it('rejects a signature that only a cofactored verifier accepts, as node:crypto witnesses do, with 401', async () => {
    const { owner, projectSlug } = await ownedProject();
    const { signing } = await prepareFor(owner, projectSlug);
    const signature = torsionSignature(owner.keys, signing.message);
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: owner.keys.publicKey }, format: 'jwk' });
    expect(verify(null, Buffer.from(signing.message, 'utf8'), publicKey, Buffer.from(signature, 'base64url'))).toBe(false);
    const reply = await publish(owner, projectSlug, { payload: signing.payload, envelope: signing.envelope, signature });
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('signature_rejected');
    expect((await t.client.get(PATH, { projectSlug })).body.checkpoints).toEqual([]);
  });

  it('rejects a replayed envelope with 409 and keeps one checkpoint', async () => {
    const { owner, projectSlug } = await ownedProject();
    const { signing } = await prepareFor(owner, projectSlug);
    const signed = sign(signing, owner.keys);
    expect((await publish(owner, projectSlug, signed)).status).toBe(200);
    const replay = await publish(owner, projectSlug, signed);
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe('conflict');
    expect((await t.client.get(PATH, { projectSlug })).body.checkpoints).toHaveLength(1);
  });

  it('rejects a payload changed after signing with 400', async () => {
    const { owner, projectSlug } = await ownedProject();
    const { signing } = await prepareFor(owner, projectSlug);
    const signed = sign(signing, owner.keys);
    const changed = { ...decode(signing.payload), treeSize: 1 };
    const reply = await publish(owner, projectSlug, { ...signed, payload: Buffer.from(JSON.stringify(changed)).toString('base64url') });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'payload', issue: 'digest mismatch' }] });
  });

  it('rejects a genuinely signed root or range that is not the ledger’s with 400, and a tree beyond the ledger with 409', async () => {
    const { owner, projectSlug } = await ownedProject();
    const { signing } = await prepareFor(owner, projectSlug);
    const wrongRoot = forge(signing, owner.keys, { payload: (p) => ({ ...p, rootHash: encodeHash(rootHash([])) }) });
    const refused = await publish(owner, projectSlug, wrongRoot);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual(expect.arrayContaining([{ field: 'payload.rootHash', issue: 'differs from the ledger' }]));

    const { signing: again } = await prepareFor(owner, projectSlug);
    const beyond = forge(again, owner.keys, { payload: (p) => ({ ...p, treeSize: 99 }) });
    const conflict = await publish(owner, projectSlug, beyond);
    expect(conflict.status).toBe(409);
    expect((await t.client.get(PATH, { projectSlug })).body.checkpoints).toEqual([]);
  });

  it('accepts a checkpoint of the tree as prepared even after newer events arrived', async () => {
    const { owner, projectSlug } = await ownedProject();
    const { signing } = await prepareFor(owner, projectSlug);
    await createTopic(t.client, owner, projectSlug);
    const reply = await publish(owner, projectSlug, sign(signing, owner.keys));
    expect(reply.status).toBe(200);
    expect(reply.body.checkpoint.treeSize).toBe(2);
  });

  it('rejects a stale or forked predecessor with 409 conflict', async () => {
    const { owner, projectSlug } = await ownedProject();
    const a = await prepareFor(owner, projectSlug);
    const b = await prepareFor(owner, projectSlug);
    expect((await publish(owner, projectSlug, sign(a.signing, owner.keys))).status).toBe(200);
    const fork = await publish(owner, projectSlug, sign(b.signing, owner.keys));
    expect(fork.status).toBe(409);
    expect(fork.body.error.code).toBe('conflict');

    const c = await prepareFor(owner, projectSlug);
    const d = await prepareFor(owner, projectSlug);
    expect((await publish(owner, projectSlug, sign(c.signing, owner.keys))).status).toBe(200);
    expect((await publish(owner, projectSlug, sign(d.signing, owner.keys))).status).toBe(409);
    expect((await t.client.get(PATH, { projectSlug })).body.checkpoints.map((x: { sequence: number }) => x.sequence)).toEqual([1, 2]);
  });

  it('starts a new chain for a rotated key and keeps the old checkpoints verifiable with the old key', async () => {
    const { owner, projectSlug } = await ownedProject();
    const old = await checkpoint(owner, projectSlug);
    const keys = await rotateKey(t.client, owner);
    const stale = await prepareFor(owner, projectSlug);
    const rotated = await checkpoint({ ...owner, keys }, projectSlug);
    expect(rotated).toMatchObject({ sequence: 1, predecessorId: null });
    expect(rotated.signerFingerprint).not.toBe(old.signerFingerprint);
    expect((await publish(owner, projectSlug, sign(stale.signing, owner.keys))).status).toBe(401);
    const full = (await t.client.get(PATH, { projectSlug, signerFingerprint: old.signerFingerprint, view: 'full' })).body.checkpoints[0];
    expect(full.signerPublicKey).toBe(owner.keys.publicKey);
  });
});

describe('checkpoint publish during a key rotation', () => {
  /** Resolves once some transaction waits for the advisory lock of `partition`; stops when `stop()` holds. */
  async function lockWaiter(partition: string, stop: () => boolean): Promise<void> {
    const em = t.orm.em.fork();
    while (!stop()) {
      const [row] = await em.execute<{ n: number }[]>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and objsubid = 1 and ` +
          'objid::text::bigint = (hashtext(?)::bigint & 4294967295)',
        [partition],
      );
      if ((row?.n ?? 0) > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('waits for a rotation of the signer’s key in flight and then refuses the rotated-out key with 401', async () => {
    const { owner, projectSlug } = await ownedProject();
    const signed = sign((await prepareFor(owner, projectSlug)).signing, owner.keys);
    const next = newKeyPair();
    // A rotation as the worker applies it: the agent's partition lock, then the new key, not yet committed.
    const rotation = t.orm.em.fork();
    await beginHeld(rotation);
    await rotation.execute('select pg_advisory_xact_lock(hashtext(?))', [handlePartition(owner.handle)]);
    await rotation.execute('update agent set public_key = ?, fingerprint = ? where id = ?', [
      next.publicKey,
      keyFingerprint(next.publicKey),
      owner.agentId,
    ]);
    let answered = false;
    const publishing = publish(owner, projectSlug, signed).finally(() => (answered = true));
    await lockWaiter(handlePartition(owner.handle), () => answered);
    const answeredBeforeRotation = answered;
    await rotation.commit();
    const reply = await publishing;
    expect(answeredBeforeRotation).toBe(false);
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe('signature_rejected');
  });
});

describe('checkpoint proofs', () => {
  it('serves inclusion proofs that verify against a signed root', async () => {
    const { owner, projectSlug } = await ownedProject();
    await createTopic(t.client, owner, projectSlug);
    const signed = await checkpoint(owner, projectSlug);
    const { events, leaves } = await leavesOf(projectSlug);
    for (const [index, event] of events.slice(0, signed.treeSize).entries()) {
      const reply = await t.client.get(`${PATH}/proofs/inclusion`, {
        projectSlug,
        eventId: event.eventId,
        treeSize: String(signed.treeSize),
      });
      expect(reply.status).toBe(200);
      const proof = reply.body.proof;
      expect(proof).toMatchObject({
        projectSlug,
        eventId: event.eventId,
        leafIndex: index,
        treeSize: signed.treeSize,
        rootHash: signed.rootHash,
      });
      expect(await verifyInclusion(leaves[index]!, index, signed.treeSize, proof.auditPath.map(hash), hash(signed.rootHash))).toBe(true);
      expect(
        await verifyInclusion(
          leaves[(index + 1) % signed.treeSize]!,
          index,
          signed.treeSize,
          proof.auditPath.map(hash),
          hash(signed.rootHash),
        ),
      ).toBe(false);
    }
  });

  it('serves consistency proofs between two checkpoints of a chain that verify with the pure verifier', async () => {
    const { owner, projectSlug } = await ownedProject();
    const first = await checkpoint(owner, projectSlug);
    for (let i = 0; i < 3; i++) await createTopic(t.client, owner, projectSlug);
    const second = await checkpoint(owner, projectSlug);
    const reply = await t.client.get(`${PATH}/proofs/consistency`, {
      projectSlug,
      first: String(first.treeSize),
      second: String(second.treeSize),
    });
    expect(reply.status).toBe(200);
    const proof = reply.body.proof;
    expect(proof).toMatchObject({
      first: first.treeSize,
      second: second.treeSize,
      firstRootHash: first.rootHash,
      secondRootHash: second.rootHash,
    });
    const path = proof.consistencyPath.map(hash);
    expect(await verifyConsistency(first.treeSize, second.treeSize, hash(first.rootHash), hash(second.rootHash), path)).toBe(true);
    expect(await verifyConsistency(first.treeSize, second.treeSize, hash(encodeHash(rootHash([]))), hash(second.rootHash), path)).toBe(
      false,
    );
  });

  it('answers 404 for unknown projects or events and 400 for sizes beyond the ledger', async () => {
    const { projectSlug } = await ownedProject();
    const { events } = await leavesOf(projectSlug);
    expect((await t.client.get(`${PATH}/proofs/inclusion`, { projectSlug: unique('none-'), eventId: '1' })).status).toBe(404);
    expect((await t.client.get(`${PATH}/proofs/inclusion`, { projectSlug, eventId: '1' })).status).toBe(404);
    expect((await t.client.get(`${PATH}/proofs/inclusion`, { projectSlug, eventId: events[0]!.eventId, treeSize: '50' })).status).toBe(400);
    expect((await t.client.get(`${PATH}/proofs/consistency`, { projectSlug, first: '3', second: '2' })).status).toBe(400);
    expect((await t.client.get(`${PATH}/proofs/consistency`, { projectSlug, first: 'x' })).status).toBe(400);
  });
});
