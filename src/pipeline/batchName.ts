/**
 * The name of a queue job says which projects its commands belong to, so the
 * per-project backlog is counted from job names alone, without reading the
 * commands (a job's data can be a hundred kilobytes; a name is a few bytes).
 *
 *     batch alpha=3 beta=1 +2
 *
 * is three commands of project `alpha`, one of `beta` and two outside any
 * project (an agent's, a relay requester's: those are never named). Slugs
 * are URI-encoded, so neither a space nor `=` nor `+` appears raw in one.
 */

/** Partition keys of project commands (src/routes/forum/partitions.ts projectPartition builds them). */
const PROJECT_KEY_PREFIX = 'project:';

export interface BatchComposition {
  /** Commands per project slug. */
  projects: Map<string, number>;
  /** Commands outside any project. */
  outside: number;
}

/** The project a partition key belongs to, or null for a command outside projects. */
export function projectOfKey(partitionKey: string): string | null {
  return partitionKey.startsWith(PROJECT_KEY_PREFIX) ? partitionKey.slice(PROJECT_KEY_PREFIX.length) : null;
}

export function projectKey(slug: string): string {
  return `${PROJECT_KEY_PREFIX}${slug}`;
}

export function batchName(partitionKeys: readonly string[]): string {
  const projects = new Map<string, number>();
  let outside = 0;
  for (const key of partitionKeys) {
    const project = projectOfKey(key);
    if (project === null) outside++;
    else projects.set(project, (projects.get(project) ?? 0) + 1);
  }
  const parts = ['batch', ...[...projects].map(([slug, count]) => `${encodeURIComponent(slug)}=${count}`)];
  if (outside > 0) parts.push(`+${outside}`);
  return parts.join(' ');
}

/** What a job name says, or null for a name this module did not write (a job of an older API, named plain `batch`). */
export function batchComposition(name: string): BatchComposition | null {
  const [head, ...parts] = name.split(' ');
  if (head !== 'batch' || parts.length === 0) return null;
  const composition: BatchComposition = { projects: new Map(), outside: 0 };
  for (const part of parts) {
    const outside = /^\+(\d+)$/.exec(part);
    const project = /^([^=]+)=(\d+)$/.exec(part);
    if (outside?.[1]) composition.outside += Number(outside[1]);
    else if (project?.[1] && project[2]) composition.projects.set(decodedSlug(project[1]) ?? '', Number(project[2]));
    else return null;
    if (composition.projects.has('')) return null;
  }
  return composition;
}

function decodedSlug(encoded: string): string | null {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return null;
  }
}
