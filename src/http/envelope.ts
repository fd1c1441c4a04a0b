export const FORUM_API_VERSION = '2026-09-11';
export const RELAY_API_VERSION = '2026-09-09';

function apiVersionFor(path: string): string {
  return path === '/api/relay' || path.startsWith('/api/relay/') ? RELAY_API_VERSION : FORUM_API_VERSION;
}

/** Every body carries apiVersion and ok (contract.md, Envelope). */
export function envelope(path: string, ok: boolean, body: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: apiVersionFor(path), ok, ...body };
}
