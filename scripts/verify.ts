/**
 * Witness verifier: `npm run verify -- <baseUrl> <projectSlug>`.
 *
 * Trusts nothing the server computed: it downloads the project's events,
 * recomputes every Merkle leaf and the root, then checks every checkpoint of
 * the project (signature by the recorded key with node:crypto, payload
 * digest, fingerprint, range and root against the recomputed tree, C2SP
 * note), every chain's links, and the server's inclusion and consistency
 * proofs against the signed roots. Prints a summary; exits 1 on any failure
 * and 2 on bad usage or an unreachable server.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { decodeHash, encodeHash, eventLeafHash, type PublicEvent } from '../src/ledger/leaf.ts';
import { rootHash, verifyConsistency, verifyInclusion, type Hash } from '../src/ledger/merkle.ts';

interface ServedEvent extends PublicEvent {
  leafIndex: number | null;
  leafHash: string | null;
}

interface ServedCheckpoint {
  checkpointId: string;
  projectSlug: string;
  signerFingerprint: string;
  sequence: number;
  predecessorId: string | null;
  treeSize: number;
  rootHash: string;
  firstEventId: string;
  lastEventId: string;
  signerPublicKey: string;
  payload: string;
  envelope: string;
  signature: string;
}

type Json = Record<string, unknown>;

class Verifier {
  readonly failures: string[] = [];
  private readonly base: string;
  readonly slug: string;

  constructor(base: string, slug: string) {
    this.base = base.replace(/\/+$/, '');
    this.slug = slug;
  }

  check(condition: boolean, failure: string): boolean {
    if (!condition) this.failures.push(failure);
    return condition;
  }

  async get(path: string, query: Record<string, string>): Promise<Json> {
    const response = await fetch(`${this.base}${path}?${new URLSearchParams(query)}`);
    const body = (await response.json()) as Json;
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${JSON.stringify(body)}`);
    return body;
  }

  async list<T>(path: string, key: string, query: Record<string, string>): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | null = null;
    do {
      const body = await this.get(path, { ...query, view: 'full', limit: '100', ...(cursor ? { cursor } : {}) });
      out.push(...(body[key] as T[]));
      cursor = body.nextCursor as string | null;
    } while (cursor);
    return out;
  }
}

const decodeText = (base64url: string): string => Buffer.from(base64url, 'base64url').toString('utf8');
const sha256 = (data: string | Uint8Array): Buffer => createHash('sha256').update(data).digest();
const hashOf = (text: string): Hash => decodeHash(text) ?? Buffer.alloc(0);

function parseObject(text: string): Json | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

/** Leaves recomputed from the events' public fields; the served leaf hashes must agree. */
async function verifyEvents(v: Verifier): Promise<{ events: ServedEvent[]; leaves: Hash[] }> {
  const events = await v.list<ServedEvent>('/api/forum/events', 'events', { projectSlug: v.slug });
  const leaves = events.map((event, index) => {
    const leaf = eventLeafHash(event);
    v.check(event.leafIndex === index, `event ${event.eventId}: leafIndex ${event.leafIndex}, expected ${index}`);
    v.check(event.leafHash === encodeHash(leaf), `event ${event.eventId}: served leafHash differs from the recomputed leaf`);
    return leaf;
  });
  for (let i = 1; i < events.length; i++) {
    v.check(BigInt(events[i]!.eventId) > BigInt(events[i - 1]!.eventId), `event ${events[i]!.eventId}: ids not increasing`);
  }
  return { events, leaves };
}

function verifySignature(v: Verifier, c: ServedCheckpoint, payloadText: string, envelope: Json): void {
  const raw = Buffer.from(c.signerPublicKey, 'base64url');
  const fingerprint = `SHA256:${sha256(raw).toString('base64url')}`;
  v.check(fingerprint === c.signerFingerprint && fingerprint === envelope.fingerprint, `checkpoint ${c.checkpointId}: signer key does not match its fingerprint`);
  v.check(envelope.version === 'forum-signed-action/v1' && envelope.action === 'checkpoint.publish', `checkpoint ${c.checkpointId}: not a checkpoint.publish envelope`);
  v.check(envelope.payloadSha256 === sha256(payloadText).toString('base64url'), `checkpoint ${c.checkpointId}: payload digest does not match the envelope`);
  let valid = false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: c.signerPublicKey }, format: 'jwk' });
    valid = verify(null, Buffer.from(decodeText(c.envelope), 'utf8'), key, Buffer.from(c.signature, 'base64url'));
  } catch {
    valid = false;
  }
  v.check(valid, `checkpoint ${c.checkpointId}: Ed25519 signature does not verify`);
}

/** The signed statement against the recomputed tree, plus the server's inclusion proof of its last event. */
async function verifyStatement(v: Verifier, c: ServedCheckpoint, payload: Json, events: ServedEvent[], leaves: Hash[]): Promise<void> {
  const id = c.checkpointId;
  const same = ['treeSize', 'rootHash', 'firstEventId', 'lastEventId', 'sequence', 'projectSlug'].every((k) => payload[k] === (c as unknown as Json)[k]);
  v.check(same, `checkpoint ${id}: listed fields differ from the signed payload`);
  const size = c.treeSize;
  if (!v.check(Number.isInteger(size) && size >= 1 && size <= leaves.length, `checkpoint ${id}: treeSize ${size} outside the ledger (${leaves.length} events)`)) return;
  const root = encodeHash(rootHash(leaves.slice(0, size)));
  v.check(payload.rootHash === root, `checkpoint ${id}: signed root differs from the root of the first ${size} events`);
  v.check(payload.firstEventId === events[0]?.eventId && payload.lastEventId === events[size - 1]?.eventId, `checkpoint ${id}: event range differs from the ledger`);
  const origin = `agora/${v.slug}`;
  v.check(payload.origin === origin && payload.note === `${origin}\n${size}\n${payload.rootHash}\n`, `checkpoint ${id}: C2SP note does not restate origin, size and root`);
  const proof = (await v.get('/api/forum/checkpoints/proofs/inclusion', { projectSlug: v.slug, eventId: c.lastEventId, treeSize: String(size) })).proof as Json;
  const path = (proof.auditPath as string[]).map(hashOf);
  v.check(verifyInclusion(leaves[size - 1]!, size - 1, size, path, hashOf(c.rootHash)), `checkpoint ${id}: inclusion proof of event ${c.lastEventId} fails`);
}

/** Each key's chain: sequences 1..n, each link naming the previous one, consistency between consecutive roots. */
async function verifyChains(v: Verifier, checkpoints: ServedCheckpoint[], payloads: Map<string, Json>): Promise<number> {
  const chains = Map.groupBy(checkpoints, (c) => c.signerFingerprint);
  for (const [fingerprint, chain] of chains) {
    chain.sort((a, b) => a.sequence - b.sequence);
    for (const [i, c] of chain.entries()) {
      const prev = chain[i - 1];
      v.check(c.sequence === i + 1, `chain ${fingerprint}: sequence ${c.sequence} where ${i + 1} was expected`);
      const link = payloads.get(c.checkpointId)?.predecessor as Json | null | undefined;
      if (!prev) {
        v.check(link === null && c.predecessorId === null, `chain ${fingerprint}: first checkpoint ${c.checkpointId} names a predecessor`);
        continue;
      }
      const linked = link?.checkpointId === prev.checkpointId && link.treeSize === prev.treeSize && link.rootHash === prev.rootHash && c.predecessorId === prev.checkpointId;
      v.check(linked, `chain ${fingerprint}: ${c.checkpointId} does not link to ${prev.checkpointId}`);
      if (!v.check(c.treeSize >= prev.treeSize, `chain ${fingerprint}: ${c.checkpointId} shrinks the tree`)) continue;
      const proof = (await v.get('/api/forum/checkpoints/proofs/consistency', { projectSlug: v.slug, first: String(prev.treeSize), second: String(c.treeSize) })).proof as Json;
      const path = (proof.consistencyPath as string[]).map(hashOf);
      v.check(verifyConsistency(prev.treeSize, c.treeSize, hashOf(prev.rootHash), hashOf(c.rootHash), path), `chain ${fingerprint}: consistency proof ${prev.treeSize} -> ${c.treeSize} fails`);
    }
  }
  return chains.size;
}

async function main(args: string[]): Promise<number> {
  const [base, slug] = args.filter((a) => a !== '--');
  if (!base || !slug) {
    console.error('usage: npm run verify -- <baseUrl> <projectSlug>');
    return 2;
  }
  const v = new Verifier(base, slug);
  try {
    const { events, leaves } = await verifyEvents(v);
    const checkpoints = await v.list<ServedCheckpoint>('/api/forum/checkpoints', 'checkpoints', { projectSlug: slug });
    const payloads = new Map<string, Json>();
    for (const c of checkpoints) {
      const payloadText = decodeText(c.payload);
      const payload = parseObject(payloadText);
      const envelope = parseObject(decodeText(c.envelope));
      if (!v.check(payload !== null && envelope !== null, `checkpoint ${c.checkpointId}: payload or envelope is not JSON`)) continue;
      payloads.set(c.checkpointId, payload as Json);
      verifySignature(v, c, payloadText, envelope as Json);
      await verifyStatement(v, c, payload as Json, events, leaves);
    }
    const chains = await verifyChains(v, checkpoints, payloads);
    console.log(`project ${slug}: ${events.length} events, root ${encodeHash(rootHash(leaves))}`);
    console.log(`checkpoints: ${checkpoints.length} in ${chains} chain(s)`);
  } catch (error) {
    console.error(`cannot verify: ${(error as Error).message}`);
    return 2;
  }
  for (const failure of v.failures) console.log(`FAIL ${failure}`);
  console.log(v.failures.length === 0 ? 'OK: events, root, signatures, chains and proofs verify' : `${v.failures.length} failure(s)`);
  return v.failures.length === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
