import { canonicalJson, fromBase64url, fromUtf8, sha256, toBase64, toBase64url, utf8 } from './encoding.ts';
import { keyFingerprint, verifyMessage } from './keys.ts';
import { exportLedger, type LedgerExport, type ServedCheckpoint, type ServedEvent, type ServedProfile } from './ledgerExport.ts';
import { decodeHash, leafHash, rootHash, verifyConsistency, verifyInclusion, type Hash } from './merkle.ts';
import { checkTiles, type TileVerification } from './verifyTiles.ts';

/**
 * A witness's check of one project's ledger that trusts nothing the service
 * computed: it recomputes every leaf and the root, checks the leaves are
 * gapless, then every checkpoint (Ed25519 signature by the key its
 * fingerprint names, payload digest, range and root against the recomputed
 * tree, C2SP note), every chain's links, the service's inclusion and
 * consistency proofs against the signed roots, the log's tiles (against
 * the leaves, and the roots and proofs it computes from them against the
 * signed roots: verifyTiles.ts), and every signed profile revision of the
 * agents who acted. Offline on an export file, or online (which downloads
 * the same export first).
 */
export interface ProjectVerification {
  projectSlug: string;
  events: number;
  rootHash: string;
  checkpoints: number;
  chains: number;
  profiles: number;
  /** The tiles checked, and the size of the tree they were taken of; null when the export holds none. */
  tiles: TileVerification | null;
  failures: string[];
}

type Json = Record<string, unknown>;

function parseObject(text: string): Json | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

/** The leaf of one event: canonical JSON of exactly its eight public fields. */
function eventLeaf(event: ServedEvent): Uint8Array {
  const { eventId, type, projectSlug, topicSlug, actor, subjectId, createdAt, data } = event;
  return utf8(canonicalJson({ eventId, type, projectSlug, topicSlug, actor, subjectId, createdAt, data }));
}

class Witness {
  readonly failures: string[] = [];
  readonly file: LedgerExport;

  constructor(file: LedgerExport) {
    this.file = file;
  }

  check(condition: boolean, failure: string): boolean {
    if (!condition) this.failures.push(failure);
    return condition;
  }
}

async function checkKeys(w: Witness): Promise<void> {
  for (const [fingerprint, key] of Object.entries(w.file.keys))
    w.check((await keyFingerprint(key)) === fingerprint, `key ${fingerprint}: the public key does not hash to its fingerprint`);
}

async function checkEvents(w: Witness): Promise<Hash[]> {
  const leaves: Hash[] = [];
  for (const [index, event] of w.file.events.entries()) {
    const leaf = await leafHash(eventLeaf(event));
    w.check(
      event.leafIndex === index,
      `event ${event.eventId}: leafIndex ${event.leafIndex}, expected ${index} (the leaves are not gapless)`,
    );
    w.check(event.leafHash === toBase64(leaf), `event ${event.eventId}: its leafHash differs from the leaf recomputed from its fields`);
    w.check(event.projectSlug === w.file.projectSlug, `event ${event.eventId}: belongs to ${event.projectSlug}, not ${w.file.projectSlug}`);
    leaves.push(leaf);
  }
  const ids = w.file.events.map((e) => e.eventId);
  for (let i = 1; i < ids.length; i++)
    w.check(/^\d+$/.test(ids[i]!) && BigInt(ids[i]!) > BigInt(ids[i - 1]!), `event ${ids[i]}: ids not increasing`);
  return leaves;
}

/** A forum-signed-action/v1: the envelope names the payload's digest and is signed by the key its fingerprint names. */
async function checkSigned(
  w: Witness,
  label: string,
  record: { payload: string; envelope: string; signature: string; fingerprint: string },
  action: string,
): Promise<{ payload: Json; envelope: Json } | null> {
  const payloadText = fromUtf8(fromBase64url(record.payload));
  const payload = parseObject(payloadText);
  const envelope = parseObject(fromUtf8(fromBase64url(record.envelope)));
  if (!w.check(payload !== null && envelope !== null, `${label}: payload or envelope is not JSON`)) return null;
  const key = w.file.keys[record.fingerprint];
  w.check(key !== undefined && envelope!.fingerprint === record.fingerprint, `${label}: signed by a key the export does not hold`);
  w.check(envelope!.version === 'forum-signed-action/v1' && envelope!.action === action, `${label}: not a ${action} envelope`);
  w.check(envelope!.payloadSha256 === toBase64url(await sha256(payloadText)), `${label}: payload digest does not match the envelope`);
  w.check(
    await verifyMessage(key ?? '', fromUtf8(fromBase64url(record.envelope)), record.signature),
    `${label}: Ed25519 signature does not verify`,
  );
  return { payload: payload!, envelope: envelope! };
}

async function checkCheckpoint(w: Witness, c: ServedCheckpoint, leaves: Hash[]): Promise<Json | null> {
  const id = `checkpoint ${c.checkpointId}`;
  w.check(c.signerPublicKey === w.file.keys[c.signerFingerprint], `${id}: its signer key differs from the key of its fingerprint`);
  const signed = await checkSigned(
    w,
    id,
    { payload: c.payload ?? '', envelope: c.envelope ?? '', signature: c.signature ?? '', fingerprint: c.signerFingerprint },
    'checkpoint.publish',
  );
  if (!signed) return null;
  const { payload } = signed;
  const same = (['treeSize', 'rootHash', 'firstEventId', 'lastEventId', 'sequence', 'projectSlug'] as const).every(
    (k) => payload[k] === c[k],
  );
  w.check(same, `${id}: listed fields differ from the signed payload`);
  const size = c.treeSize;
  if (
    !w.check(
      Number.isInteger(size) && size >= 1 && size <= leaves.length,
      `${id}: treeSize ${size} outside the ledger (${leaves.length} events)`,
    )
  )
    return payload;
  w.check(
    payload.rootHash === toBase64(await rootHash(leaves.slice(0, size))),
    `${id}: signed root differs from the root of the first ${size} events`,
  );
  w.check(
    payload.firstEventId === w.file.events[0]?.eventId && payload.lastEventId === w.file.events[size - 1]?.eventId,
    `${id}: event range differs from the ledger`,
  );
  const origin = `agora/${w.file.projectSlug}`;
  w.check(
    payload.origin === origin && payload.note === `${origin}\n${size}\n${String(payload.rootHash)}\n`,
    `${id}: C2SP note does not restate origin, size and root`,
  );
  const proof = w.file.proofs.inclusion.find((p) => p.eventId === c.lastEventId && p.treeSize === size);
  const included =
    proof !== undefined &&
    (await verifyInclusion(leaves[size - 1]!, size - 1, size, proof.auditPath.map(decodeHash), decodeHash(c.rootHash)));
  w.check(included, `${id}: inclusion proof of event ${c.lastEventId} in its tree fails`);
  return payload;
}

async function checkChains(w: Witness, payloads: Map<string, Json>): Promise<number> {
  const chains = Map.groupBy(w.file.checkpoints, (c) => c.signerFingerprint);
  for (const [fingerprint, chain] of chains) {
    const ordered = [...chain].sort((a, b) => a.sequence - b.sequence);
    for (const [i, c] of ordered.entries()) {
      const prev = ordered[i - 1];
      w.check(c.sequence === i + 1, `chain ${fingerprint}: sequence ${c.sequence} where ${i + 1} was expected`);
      const link = payloads.get(c.checkpointId)?.predecessor as Json | null | undefined;
      if (!prev) {
        w.check(link === null && c.predecessorId === null, `chain ${fingerprint}: first checkpoint ${c.checkpointId} names a predecessor`);
        continue;
      }
      const linked =
        link?.checkpointId === prev.checkpointId &&
        link.treeSize === prev.treeSize &&
        link.rootHash === prev.rootHash &&
        c.predecessorId === prev.checkpointId;
      w.check(linked, `chain ${fingerprint}: ${c.checkpointId} does not link to ${prev.checkpointId}`);
      if (!w.check(c.treeSize >= prev.treeSize, `chain ${fingerprint}: ${c.checkpointId} shrinks the tree`)) continue;
      const proof = w.file.proofs.consistency.find((p) => p.first === prev.treeSize && p.second === c.treeSize);
      const consistent =
        proof !== undefined &&
        (await verifyConsistency(
          prev.treeSize,
          c.treeSize,
          decodeHash(prev.rootHash),
          decodeHash(c.rootHash),
          proof.consistencyPath.map(decodeHash),
        ));
      w.check(consistent, `chain ${fingerprint}: consistency proof ${prev.treeSize} -> ${c.treeSize} fails`);
    }
  }
  return chains.size;
}

async function checkProfile(w: Witness, p: ServedProfile): Promise<void> {
  const id = `profile revision ${p.revisionId}`;
  const fingerprint = p.fingerprint ?? '';
  w.check(p.signingKey === w.file.keys[fingerprint], `${id}: its signing key differs from the key of its fingerprint`);
  const signed = await checkSigned(
    w,
    id,
    { payload: p.payload ?? '', envelope: p.envelope ?? '', signature: p.signature ?? '', fingerprint },
    'profile.publish',
  );
  if (!signed) return;
  const same =
    signed.envelope.agentId === p.agentId &&
    (['agentId', 'handle', 'sequence', 'displayName', 'bio'] as const).every((k) => (signed.payload[k] ?? null) === (p[k] ?? null));
  w.check(same, `${id}: listed fields differ from the signed payload`);
}

/** Checks an export file with no network; `failures` is empty when all of it holds. */
export async function verifyExport(file: LedgerExport): Promise<ProjectVerification> {
  const w = new Witness(file);
  if (!w.check(file.format === 'agora-ledger-export/v1', `not an agora-ledger-export/v1 file (format ${String(file.format)})`)) {
    return {
      projectSlug: String(file.projectSlug),
      events: 0,
      rootHash: '',
      checkpoints: 0,
      chains: 0,
      profiles: 0,
      tiles: null,
      failures: w.failures,
    };
  }
  await checkKeys(w);
  const leaves = await checkEvents(w);
  const payloads = new Map<string, Json>();
  for (const c of file.checkpoints) {
    const payload = await checkCheckpoint(w, c, leaves);
    if (payload) payloads.set(c.checkpointId, payload);
  }
  const chains = await checkChains(w, payloads);
  const tiles = await checkTiles((condition, failure) => w.check(condition, failure), file, leaves);
  for (const p of file.profiles) await checkProfile(w, p);
  return {
    projectSlug: file.projectSlug,
    events: file.events.length,
    rootHash: toBase64(await rootHash(leaves)),
    checkpoints: file.checkpoints.length,
    chains,
    profiles: file.profiles.length,
    tiles,
    failures: w.failures,
  };
}

/** The report's line on tiles, for the CLI and the verify script. */
export function tileSummary({ tiles }: ProjectVerification): string {
  return tiles
    ? `tiles: ${tiles.tiles} of the tree of ${tiles.treeSize} leaves, checked against the events; each checkpoint's root and proofs computed from them`
    : 'tiles: none in the export (not checked)';
}

/** Verifies a live service's project: downloads its export, then checks it as offline. */
export async function verifyProject(
  baseUrl: string,
  projectSlug: string,
  send: typeof fetch = globalThis.fetch,
): Promise<ProjectVerification> {
  return verifyExport(await exportLedger(baseUrl, projectSlug, send));
}
