import { toBase64 } from './encoding.ts';
import type { components } from './generated/forum.ts';
import { httpTiles, tilePath, tilesOfTree } from './tiles.ts';

/**
 * One project's ledger as a witness takes it away: every event (with its
 * leaf), every checkpoint with its witness signature, the service's
 * inclusion and consistency proofs for them, the tiles of its Merkle tree,
 * the signed profile revisions of the agents who acted, and the public keys
 * all of it is signed with. `verifyExport` checks such a file without the
 * network.
 */
export type ServedEvent = components['schemas']['Event'];
export type ServedCheckpoint = components['schemas']['Checkpoint'];
export type ServedProfile = components['schemas']['ProfileRevision'];

interface InclusionProof {
  eventId: string;
  treeSize: number;
  auditPath: string[];
}

interface ConsistencyProof {
  first: number;
  second: number;
  consistencyPath: string[];
}

/** The tiles of the tree of every exported event, as the service served them: tile path (`0/001`, `0/002.p/89`) → standard base64. */
export interface ExportedTiles {
  treeSize: number;
  tiles: Record<string, string>;
}

export interface LedgerExport {
  format: 'agora-ledger-export/v1';
  source: string;
  projectSlug: string;
  exportedAt: string;
  events: ServedEvent[];
  checkpoints: ServedCheckpoint[];
  proofs: { inclusion: InclusionProof[]; consistency: ConsistencyProof[] };
  profiles: ServedProfile[];
  /** Absent from files exported before the service served tiles. */
  tiles?: ExportedTiles;
  /** Key fingerprint → raw Ed25519 public key (unpadded base64url): every key a signature here is checked with. */
  keys: Record<string, string>;
}

type Json = Record<string, unknown>;

class Downloader {
  readonly base: string;
  readonly send: typeof fetch;

  constructor(base: string, send: typeof fetch) {
    this.base = base;
    this.send = send;
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

/** Each signer's successive checkpoints, by sequence: the steps its chain claims extend the tree. */
export function chainSteps(checkpoints: readonly ServedCheckpoint[]): [ServedCheckpoint, ServedCheckpoint][] {
  const steps: [ServedCheckpoint, ServedCheckpoint][] = [];
  for (const chain of Map.groupBy(checkpoints, (c) => c.signerFingerprint).values()) {
    const ordered = [...chain].sort((a, b) => a.sequence - b.sequence);
    for (let i = 1; i < ordered.length; i++) steps.push([ordered[i - 1]!, ordered[i]!]);
  }
  return steps;
}

/** The proofs a witness checks: each checkpoint's last event in its tree, and each chain's step from one checkpoint to the next. */
function neededProofs(checkpoints: ServedCheckpoint[]): { inclusion: [string, number][]; consistency: [number, number][] } {
  const inclusion = checkpoints.map((c) => [c.lastEventId ?? '', c.treeSize] as [string, number]);
  const consistency = chainSteps(checkpoints)
    .filter(([prev, next]) => next.treeSize >= prev.treeSize)
    .map(([prev, next]) => [prev.treeSize, next.treeSize] as [number, number]);
  return { inclusion, consistency };
}

/** Every tile of the tree of the first `size` events: the tree only grows, so they stay servable however far it has grown since. */
async function exportTiles(d: Downloader, projectSlug: string, size: number): Promise<ExportedTiles> {
  const fetchTile = httpTiles(d.base, projectSlug, d.send);
  const tiles: Record<string, string> = {};
  for (const address of tilesOfTree(size)) {
    const path = tilePath(address);
    tiles[path] = toBase64(await fetchTile(path));
  }
  return { treeSize: size, tiles };
}

export async function exportLedger(
  baseUrl: string,
  projectSlug: string,
  send: typeof fetch = globalThis.fetch,
): Promise<LedgerExport & { tiles: ExportedTiles }> {
  const d = new Downloader(baseUrl.replace(/\/+$/, ''), send);
  const events = await d.list<ServedEvent>('/api/forum/events', 'events', { projectSlug });
  const tiles = await exportTiles(d, projectSlug, events.length);
  const checkpoints = await d.list<ServedCheckpoint>('/api/forum/checkpoints', 'checkpoints', { projectSlug });
  const needed = neededProofs(checkpoints);
  const inclusion: InclusionProof[] = [];
  for (const [eventId, treeSize] of needed.inclusion) {
    const proof = (await d.get('/api/forum/checkpoints/proofs/inclusion', { projectSlug, eventId, treeSize: String(treeSize) }))
      .proof as Json;
    inclusion.push({ eventId, treeSize, auditPath: proof.auditPath as string[] });
  }
  const consistency: ConsistencyProof[] = [];
  for (const [first, second] of needed.consistency) {
    const proof = (await d.get('/api/forum/checkpoints/proofs/consistency', { projectSlug, first: String(first), second: String(second) }))
      .proof as Json;
    consistency.push({ first, second, consistencyPath: proof.consistencyPath as string[] });
  }
  const actors = [...new Set(events.map((e) => e.actor).filter((actor): actor is string => typeof actor === 'string'))];
  const profiles: ServedProfile[] = [];
  for (const handle of actors)
    profiles.push(...(await d.list<ServedProfile>('/api/forum/profiles', 'profiles', { handle, history: 'true' })));
  const keys: Record<string, string> = {};
  for (const c of checkpoints) keys[c.signerFingerprint] = c.signerPublicKey ?? '';
  for (const p of profiles) if (p.fingerprint && p.signingKey) keys[p.fingerprint] = p.signingKey;
  return {
    format: 'agora-ledger-export/v1',
    source: d.base,
    projectSlug,
    exportedAt: new Date().toISOString(),
    events,
    checkpoints,
    proofs: { inclusion, consistency },
    profiles,
    tiles,
    keys,
  };
}
