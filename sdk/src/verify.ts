import type { components } from './generated/forum.ts';
import { canonicalJson, fromBase64, fromBase64url, fromUtf8, sha256, toBase64, toBase64url, utf8 } from './encoding.ts';
import { keyFingerprint, verifyMessage } from './keys.ts';
import { leafHash, rootHash, verifyConsistency, verifyInclusion, type Hash } from './merkle.ts';

/**
 * A witness's check of one project's ledger that trusts nothing the service
 * computed: it downloads the events, recomputes every leaf and the root, then
 * checks every checkpoint (Ed25519 signature by the recorded key, payload
 * digest, fingerprint, range and root against the recomputed tree, C2SP
 * note), every chain's links, and the service's inclusion and consistency
 * proofs against the signed roots.
 */
export interface ProjectVerification {
  projectSlug: string;
  events: number;
  rootHash: string;
  checkpoints: number;
  chains: number;
  failures: string[];
}

/** What the service serves in view=full (types generated from its openapi.json). */
type ServedEvent = components['schemas']['Event'];
type ServedCheckpoint = components['schemas']['Checkpoint'];

type Json = Record<string, unknown>;

const decodeHash = (text: string): Hash => (/^[A-Za-z0-9+/]{43}=$/.test(text) ? fromBase64(text) : new Uint8Array());

function parseObject(text: string): Json | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

/** The leaf of one event: canonical JSON of exactly its eight public fields. */
export function eventLeaf(event: ServedEvent): Uint8Array {
  const { eventId, type, projectSlug, topicSlug, actor, subjectId, createdAt, data } = event;
  return utf8(canonicalJson({ eventId, type, projectSlug, topicSlug, actor, subjectId, createdAt, data }));
}

class Witness {
  readonly failures: string[] = [];
  readonly base: string;
  readonly slug: string;
  readonly send: typeof fetch;

  constructor(base: string, slug: string, send: typeof fetch) {
    this.base = base;
    this.slug = slug;
    this.send = send;
  }

  check(condition: boolean, failure: string): boolean {
    if (!condition) this.failures.push(failure);
    return condition;
  }

  async get(path: string, query: Record<string, string>): Promise<Json> {
    const response = await this.send(`${this.base}${path}?${new URLSearchParams(query)}`);
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

async function checkEvents(w: Witness): Promise<{ events: ServedEvent[]; leaves: Hash[] }> {
  const events = await w.list<ServedEvent>('/api/forum/events', 'events', { projectSlug: w.slug });
  const leaves: Hash[] = [];
  for (const [index, event] of events.entries()) {
    const leaf = await leafHash(eventLeaf(event));
    w.check(event.leafIndex === index, `event ${event.eventId}: leafIndex ${event.leafIndex}, expected ${index}`);
    w.check(event.leafHash === toBase64(leaf), `event ${event.eventId}: served leafHash differs from the recomputed leaf`);
    leaves.push(leaf);
  }
  for (let i = 1; i < events.length; i++) {
    w.check(BigInt(events[i]!.eventId) > BigInt(events[i - 1]!.eventId), `event ${events[i]!.eventId}: ids not increasing`);
  }
  return { events, leaves };
}

async function checkSignature(w: Witness, c: ServedCheckpoint, payloadText: string, envelope: Json): Promise<void> {
  const fingerprint = await keyFingerprint(c.signerPublicKey ?? '');
  w.check(fingerprint === c.signerFingerprint && fingerprint === envelope.fingerprint, `checkpoint ${c.checkpointId}: signer key does not match its fingerprint`);
  w.check(envelope.version === 'forum-signed-action/v1' && envelope.action === 'checkpoint.publish', `checkpoint ${c.checkpointId}: not a checkpoint.publish envelope`);
  w.check(envelope.payloadSha256 === toBase64url(await sha256(payloadText)), `checkpoint ${c.checkpointId}: payload digest does not match the envelope`);
  const valid = await verifyMessage(c.signerPublicKey ?? '', fromUtf8(fromBase64url(c.envelope ?? '')), c.signature ?? '');
  w.check(valid, `checkpoint ${c.checkpointId}: Ed25519 signature does not verify`);
}

async function checkStatement(w: Witness, c: ServedCheckpoint, payload: Json, events: ServedEvent[], leaves: Hash[]): Promise<void> {
  const id = c.checkpointId;
  const same = (['treeSize', 'rootHash', 'firstEventId', 'lastEventId', 'sequence', 'projectSlug'] as const).every((k) => payload[k] === c[k]);
  w.check(same, `checkpoint ${id}: listed fields differ from the signed payload`);
  const size = c.treeSize;
  if (!w.check(Number.isInteger(size) && size >= 1 && size <= leaves.length, `checkpoint ${id}: treeSize ${size} outside the ledger (${leaves.length} events)`)) return;
  w.check(payload.rootHash === toBase64(await rootHash(leaves.slice(0, size))), `checkpoint ${id}: signed root differs from the root of the first ${size} events`);
  w.check(payload.firstEventId === events[0]?.eventId && payload.lastEventId === events[size - 1]?.eventId, `checkpoint ${id}: event range differs from the ledger`);
  const origin = `agora/${w.slug}`;
  w.check(payload.origin === origin && payload.note === `${origin}\n${size}\n${String(payload.rootHash)}\n`, `checkpoint ${id}: C2SP note does not restate origin, size and root`);
  const proof = (await w.get('/api/forum/checkpoints/proofs/inclusion', { projectSlug: w.slug, eventId: c.lastEventId ?? '', treeSize: String(size) })).proof as Json;
  const path = (proof.auditPath as string[]).map(decodeHash);
  w.check(await verifyInclusion(leaves[size - 1]!, size - 1, size, path, decodeHash(c.rootHash)), `checkpoint ${id}: inclusion proof of event ${c.lastEventId} fails`);
}

async function checkChains(w: Witness, checkpoints: ServedCheckpoint[], payloads: Map<string, Json>): Promise<number> {
  const chains = Map.groupBy(checkpoints, (c) => c.signerFingerprint);
  for (const [fingerprint, chain] of chains) {
    chain.sort((a, b) => a.sequence - b.sequence);
    for (const [i, c] of chain.entries()) {
      const prev = chain[i - 1];
      w.check(c.sequence === i + 1, `chain ${fingerprint}: sequence ${c.sequence} where ${i + 1} was expected`);
      const link = payloads.get(c.checkpointId)?.predecessor as Json | null | undefined;
      if (!prev) {
        w.check(link === null && c.predecessorId === null, `chain ${fingerprint}: first checkpoint ${c.checkpointId} names a predecessor`);
        continue;
      }
      const linked = link?.checkpointId === prev.checkpointId && link.treeSize === prev.treeSize && link.rootHash === prev.rootHash && c.predecessorId === prev.checkpointId;
      w.check(linked, `chain ${fingerprint}: ${c.checkpointId} does not link to ${prev.checkpointId}`);
      if (!w.check(c.treeSize >= prev.treeSize, `chain ${fingerprint}: ${c.checkpointId} shrinks the tree`)) continue;
      const proof = (await w.get('/api/forum/checkpoints/proofs/consistency', { projectSlug: w.slug, first: String(prev.treeSize), second: String(c.treeSize) })).proof as Json;
      const path = (proof.consistencyPath as string[]).map(decodeHash);
      const consistent = await verifyConsistency(prev.treeSize, c.treeSize, decodeHash(prev.rootHash), decodeHash(c.rootHash), path);
      w.check(consistent, `chain ${fingerprint}: consistency proof ${prev.treeSize} -> ${c.treeSize} fails`);
    }
  }
  return chains.size;
}

/** Verifies one project's events, root, checkpoints, chains and proofs; `failures` is empty when all of it holds. */
export async function verifyProject(baseUrl: string, projectSlug: string, send: typeof fetch = globalThis.fetch): Promise<ProjectVerification> {
  const w = new Witness(baseUrl.replace(/\/+$/, ''), projectSlug, send);
  const { events, leaves } = await checkEvents(w);
  const checkpoints = await w.list<ServedCheckpoint>('/api/forum/checkpoints', 'checkpoints', { projectSlug });
  const payloads = new Map<string, Json>();
  for (const c of checkpoints) {
    const payloadText = fromUtf8(fromBase64url(c.payload ?? ''));
    const payload = parseObject(payloadText);
    const envelope = parseObject(fromUtf8(fromBase64url(c.envelope ?? '')));
    if (!w.check(payload !== null && envelope !== null, `checkpoint ${c.checkpointId}: payload or envelope is not JSON`)) continue;
    payloads.set(c.checkpointId, payload as Json);
    await checkSignature(w, c, payloadText, envelope as Json);
    await checkStatement(w, c, payload as Json, events, leaves);
  }
  const chains = await checkChains(w, checkpoints, payloads);
  return { projectSlug, events: events.length, rootHash: toBase64(await rootHash(leaves)), checkpoints: checkpoints.length, chains, failures: w.failures };
}
