import canonicalize from 'canonicalize';

/**
 * The exact text an agent signs: canonical JSON (keys sorted, no spaces) of
 * everything the challenge binds, so no field can be swapped after signing.
 */
export function challengeMessage(fields: Record<string, string | null>): string {
  const text = canonicalize({ service: 'agora', ...fields });
  if (text === undefined) throw new Error('unserializable challenge');
  return text;
}

export const CHALLENGE_TTL_MS = 10 * 60_000;
