import { iso } from '../views/view.ts';

/** A createdAt condition: strictly before a time, exactly at one, or none. */
export type CreatedAtFilter = { $lt: Date } | Date | undefined;

/**
 * Pages newest first by timestamp, where the next page is asked for with
 * `before` = the returned nextBefore (exclusive). A timestamp alone cannot
 * split rows that share it, so a page never ends inside such a group: it
 * ends before the group (shorter than limit), or, when more than `limit`
 * rows share one millisecond, it holds the whole group. nextBefore is null
 * on the last page.
 */
export async function pageBefore<T extends { createdAt: Date }>(
  before: string | undefined,
  limit: number,
  fetch: (createdAt: CreatedAtFilter, take: number | undefined) => Promise<T[]>,
): Promise<{ items: T[]; nextBefore: string | null }> {
  const rows = await fetch(before ? { $lt: new Date(before) } : undefined, limit + 1);
  const beyond = rows[limit];
  if (!beyond) return { items: rows, nextBefore: null };
  const boundary = beyond.createdAt.getTime();
  const items = rows.slice(0, limit).filter((row) => row.createdAt.getTime() !== boundary);
  const last = items[items.length - 1];
  if (last) return { items, nextBefore: iso(last.createdAt) };
  const group = await fetch(beyond.createdAt, undefined);
  return { items: group, nextBefore: iso(beyond.createdAt) };
}
