import { toBase64 } from './encoding.ts';
import { decodeHash, verifyConsistency, type Hash } from './merkle.ts';
import { httpTiles, logUrl, TileLog } from './tiles.ts';

/**
 * A verifier that follows one project's log: each update reads the latest
 * checkpoint note, recomputes that tree's root from tiles, and proves from
 * the same tiles that the tree it held before is a prefix of the new one.
 * It keeps its tiles, so an update fetches only the tiles the tree grew
 * into (and the right-edge partials that grew), never a full tile twice.
 * The note's signatures are over checkpoint envelopes the note does not
 * carry; verifyProject checks those.
 */
export interface CheckpointNote {
  origin: string;
  treeSize: number;
  /** Standard base64, as the note states it. */
  rootHash: string;
  /** The key fingerprints its signature lines name (`— <origin>/<fingerprint> ...`). */
  signers: string[];
}

/** A C2SP signed note of an Agora checkpoint, or null when the text is not one. */
export function parseCheckpointNote(text: string): CheckpointNote | null {
  const split = text.indexOf('\n\n');
  if (split < 0) return null;
  const body = text.slice(0, split + 1).split('\n');
  const [origin, size, root] = body;
  if (body.length !== 4 || !origin || !/^[1-9]\d{0,15}$/.test(size ?? '') || decodeHash(root ?? '').length === 0) return null;
  const signers: string[] = [];
  for (const line of text
    .slice(split + 2)
    .split('\n')
    .filter(Boolean)) {
    const name = /^— (\S+) [A-Za-z0-9+/]+={0,2}$/.exec(line)?.[1];
    if (!name?.startsWith(`${origin}/`)) return null;
    signers.push(name.slice(origin.length + 1));
  }
  return signers.length > 0 ? { origin, treeSize: Number(size), rootHash: root!, signers } : null;
}

/** What one update saw: the new tree, the size it was proved to extend, and the tiles it cost. */
export interface LogUpdate {
  treeSize: number;
  rootHash: string;
  previousSize: number;
  signers: string[];
  /** Paths of the tiles this update fetched. */
  fetched: string[];
}

export class LogFollower {
  readonly projectSlug: string;
  private readonly tiles: TileLog;
  private readonly get: (url: string) => Promise<Response>;
  private readonly url: string;
  private size = 0;
  private root: Hash = new Uint8Array();

  constructor(baseUrl: string, projectSlug: string, get: (url: string) => Promise<Response> = (url) => fetch(url)) {
    this.projectSlug = projectSlug;
    this.get = get;
    this.url = logUrl(baseUrl, projectSlug);
    this.tiles = new TileLog(httpTiles(baseUrl, projectSlug, get));
  }

  /** The size of the last tree an update accepted (0 before the first). */
  get treeSize(): number {
    return this.size;
  }

  /** Takes the latest checkpoint once it is proved from tiles; throws, keeping the tree it held, when it is not. */
  async update(): Promise<LogUpdate> {
    const response = await this.get(`${this.url}/checkpoint`);
    const text = await response.text();
    if (response.status !== 200) throw new Error(`GET ${this.url}/checkpoint answered ${response.status}`);
    const origin = `agora/${this.projectSlug}`;
    const note = parseCheckpointNote(text);
    if (note?.origin !== origin) throw new Error(`the log's checkpoint is not a signed note of ${origin}`);
    const { treeSize, rootHash } = note;
    if (treeSize < this.size) throw new Error(`the log shrank from ${this.size} to ${treeSize} leaves`);
    const before = this.tiles.fetched.length;
    const root = await this.tiles.root(treeSize);
    if (toBase64(root) !== rootHash) throw new Error(`the root of the tiles of ${treeSize} leaves differs from the checkpoint's`);
    const proof = await this.tiles.consistencyProof(this.size, treeSize);
    if (!(await verifyConsistency(this.size, treeSize, this.root, root, proof)))
      throw new Error(`the tree of ${this.size} leaves it held is not a prefix of the tree of ${treeSize}`);
    const previousSize = this.size;
    this.size = treeSize;
    this.root = root;
    return { treeSize, rootHash, previousSize, signers: note.signers, fetched: this.tiles.fetched.slice(before) };
  }
}
