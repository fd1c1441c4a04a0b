/**
 * What the drill asks of the restored service, through its public API only: the posts, votes and follows
 * acknowledged before T, none after, and the ledger as a witness holds it (sdk/src/verify.ts).
 */
import { exportLedger, type LedgerExport } from '../../sdk/src/ledgerExport.ts';
import { verifyExport } from '../../sdk/src/verify.ts';
import type { Client, TestAgent } from '../../test/support/client.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface DrillWrites {
  projectSlug: string;
  topicSlug: string;
  /** A: acknowledged before T, with the tally each was voted to. */
  before: { id: string; support: number }[];
  /** B: acknowledged after T. */
  after: string[];
  /** The project the voter followed before T, and the one after. */
  followedBefore: string;
  followedAfter: string;
}

async function listPosts(client: Client, projectSlug: string, topicSlug: string) {
  const posts: { id: string; tally: { support: number } }[] = [];
  let cursor: string | null = null;
  do {
    const reply = await client.get('/api/forum/posts', {
      projectSlug,
      topicSlug,
      view: 'full',
      limit: '100',
      ...(cursor ? { cursor } : {}),
    });
    if (reply.status !== 200) throw new Error(`listing posts answered ${reply.status}`);
    posts.push(...reply.body.posts);
    cursor = reply.body.nextCursor;
  } while (cursor);
  return posts;
}

/** Failures of the posts, votes and follows: empty when the restore kept exactly what was acknowledged before T. */
export async function contentFailures(client: Client, voter: TestAgent, writes: DrillWrites, newer: Set<string>): Promise<string[]> {
  const failures: string[] = [];
  // Posts written after the restore (the drill's own probe) are not A's business.
  const posts = (await listPosts(client, writes.projectSlug, writes.topicSlug)).filter((p) => !newer.has(p.id));
  const seen = new Map<string, number>();
  for (const post of posts) seen.set(post.id, (seen.get(post.id) ?? 0) + 1);
  const missing = writes.before.filter((p) => !seen.has(p.id));
  const doubled = writes.before.filter((p) => (seen.get(p.id) ?? 0) > 1);
  const kept = writes.after.filter((id) => seen.has(id));
  const tallies = new Map(posts.map((p) => [p.id, p.tally.support]));
  const wrongTally = writes.before.filter((p) => seen.has(p.id) && tallies.get(p.id) !== p.support);
  if (missing.length) failures.push(`${missing.length} of ${writes.before.length} posts acknowledged before T are missing`);
  if (doubled.length) failures.push(`${doubled.length} posts acknowledged before T are listed more than once`);
  if (kept.length) failures.push(`${kept.length} of ${writes.after.length} posts written after T are still there`);
  if (wrongTally.length) failures.push(`${wrongTally.length} posts have another support tally than their votes before T made`);
  if (posts.length !== writes.before.length) failures.push(`the topic lists ${posts.length} posts, not the ${writes.before.length} of A`);
  const follows = await client.get('/api/forum/follows', { targetType: 'project', limit: '100' }, { token: voter.token });
  const slugs = new Set<string>((follows.body?.follows ?? []).map((f: { projectSlug?: string; targetId?: string }) => f.projectSlug));
  if (follows.status !== 200) failures.push(`the voter's follows answered ${follows.status}`);
  else {
    if (!slugs.has(writes.followedBefore)) failures.push('the follow acknowledged before T is missing');
    if (slugs.has(writes.followedAfter)) failures.push('the follow acknowledged after T is still there');
  }
  return failures;
}

/**
 * The ledger after the restore: its export verifies as a whole (leaves gapless, every checkpoint's signature,
 * root and proofs against the restored tree), and every checkpoint signed at or before T, as the witness had
 * exported it before the accident, is there with the same tree size and root. Those signed after T are gone:
 * their tree no longer exists, and that is what a witness would see.
 */
export async function ledgerFailures(base: string, projectSlug: string, beforeAccident: LedgerExport, t: Date): Promise<string[]> {
  const restored = await exportAgain(base, projectSlug);
  const report = await verifyExport(restored);
  const failures = report.failures.map((f) => `ledger: ${f}`);
  const signedByT = beforeAccident.checkpoints.filter((c) => c.createdAt && new Date(c.createdAt).getTime() <= t.getTime());
  if (signedByT.length === 0) failures.push('ledger: no checkpoint was signed before T (the drill signs one)');
  for (const c of signedByT) {
    const same = restored.checkpoints.find((r) => r.checkpointId === c.checkpointId);
    if (!same || same.treeSize !== c.treeSize || same.rootHash !== c.rootHash) {
      failures.push(`ledger: checkpoint ${c.checkpointId} (tree ${c.treeSize}), signed before T, is not in the restored ledger as signed`);
    }
  }
  const after = beforeAccident.checkpoints.filter((c) => !signedByT.includes(c));
  for (const c of after) {
    if (restored.checkpoints.some((r) => r.checkpointId === c.checkpointId))
      failures.push(`ledger: checkpoint ${c.checkpointId}, signed after T, survived`);
  }
  return failures.concat(report.events === 0 ? ['ledger: the restored project has no events'] : []);
}

/**
 * An export taken while the replicas settle: events, checkpoints and tiles are read in separate requests, each
 * from whichever replica the balancer picks, and one that lags (a member cloned a moment ago) may not yet serve
 * the tile of a tree another already lists. A witness asks again; so does the drill, for a while.
 */
async function exportAgain(base: string, projectSlug: string): Promise<LedgerExport> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await exportLedger(base, projectSlug);
    } catch (error) {
      if (attempt >= 20) throw error;
      await pause(500);
    }
  }
}

/** Until the service takes a write again, through the balancer: how long the outage lasted as a client saw it. */
export async function untilWritable(write: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await write().catch(() => false)) return;
    await pause(250);
  }
  throw new Error(`the service took no write within ${ms / 1000} s of the restore`);
}
