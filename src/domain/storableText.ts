import { ApiError } from '../errors.ts';

/**
 * Postgres text and jsonb cannot hold U+0000 or an unpaired UTF-16 surrogate,
 * so such a string would fail in the database (a 5xx) instead of being
 * refused. Walks already-validated values only, whose depth the schema bounds.
 */
export function unstorableTextFields(value: unknown, path = ''): string[] {
  const at = (key: string) => (path ? `${path}.${key}` : key);
  if (typeof value === 'string') return value.includes('\u0000') || !value.isWellFormed() ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => unstorableTextFields(item, at(String(index))));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => unstorableTextFields(key, at(key)).concat(unstorableTextFields(item, at(key))));
  return [];
}

export function refuseUnstorableText(value: unknown, prefix = ''): void {
  const fields = unstorableTextFields(value, prefix);
  if (fields.length === 0) return;
  const details = fields.map((field) => ({ field, issue: 'contains a NUL character or an unpaired UTF-16 surrogate' }));
  throw new ApiError('invalid_request', `invalid parameters: ${fields.join(', ')}`, details);
}
