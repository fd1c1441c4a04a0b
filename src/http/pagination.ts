import { ApiError } from '../errors.ts';

/**
 * Cursors are opaque to clients: base64url of the last id of the page.
 * Ids sort by creation time, so the next page is `id > cursor`.
 *
 * A cursor is a position, not a credential, and is deliberately not signed.
 * A well-formed cursor the service never issued (base64url of an invented
 * id) pages from where that id would sort: the records after it, or an
 * empty page with nextCursor null when nothing follows. That is right, not
 * a gap: every page applies its read's own filters and visibility, so a
 * forged position reaches nothing the first page and the issued cursors do
 * not; and the feed already hands a position back as its cursor to poll
 * from. Signing would need a secret every API instance shares, and losing
 * or rotating it would turn every client's next page into a 400, for no
 * protection. Only a value that is no record id at all is refused (400
 * invalid_request, field cursor).
 */
export function decodeCursor(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[a-z]+_[0-9a-z]{26}$/.test(id))
    throw new ApiError('invalid_request', 'cursor is not a cursor this service issued', [{ field: 'cursor', issue: 'invalid' }]);
  return id;
}

export function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

/** Takes a page fetched with limit + 1 rows and returns it with the next cursor. */
export function page<T extends { id: string }>(rows: T[], limit: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor(last.id) : null;
  return { items, nextCursor };
}
