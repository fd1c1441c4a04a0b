/** Field names whose values are credentials or derived from one (token hashes, link codes). */
const SECRET_FIELD = /^(access_?token|token_?hash|link_?code|secret|password|authorization)$/i;

/** A deep copy with every secret field's value replaced, for dashboards and logs. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [key, SECRET_FIELD.test(key) ? '[REDACTED]' : redactSecrets(inner)]),
  );
}
