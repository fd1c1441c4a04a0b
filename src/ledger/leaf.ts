import canonicalize from 'canonicalize';
import { leafHash, type Hash } from './merkle.ts';

/**
 * The public representation of one ledger event: exactly what
 * GET /api/forum/events returns in view=full, minus the fields derived from
 * the tree itself (leafIndex, leafHash, publishedAt, links). A project's
 * Merkle leaf is the canonical JSON (RFC 8785: sorted keys, no whitespace)
 * of this object, so anyone holding the events can recompute every hash.
 */
export interface PublicEvent {
  eventId: string;
  type: string;
  projectSlug: string | null;
  topicSlug: string | null;
  actor: string | null;
  subjectId: string | null;
  createdAt: string;
  data: Record<string, unknown>;
}

export function publicEvent(source: PublicEvent): PublicEvent {
  return {
    eventId: source.eventId,
    type: source.type,
    projectSlug: source.projectSlug,
    topicSlug: source.topicSlug,
    actor: source.actor,
    subjectId: source.subjectId,
    createdAt: source.createdAt,
    data: source.data,
  };
}

/** The leaf bytes: canonical JSON of exactly the eight public fields, UTF-8. */
export function eventLeaf(event: PublicEvent): string {
  const text = canonicalize(publicEvent(event));
  // Unreachable: canonicalize answers undefined only for a value without a JSON form, and publicEvent
  // always builds a plain object; the check is there for the type.
  // Stryker disable next-line StringLiteral: equivalent (unreachable, above)
  if (text === undefined) throw new Error('event cannot be canonicalized');
  return text;
}

export function eventLeafHash(event: PublicEvent): Hash {
  return leafHash(Buffer.from(eventLeaf(event), 'utf8'));
}

/** Hashes travel as standard base64 with padding, as in C2SP tlog-checkpoint notes. */
export function encodeHash(hash: Hash): string {
  return Buffer.from(hash).toString('base64');
}

export function decodeHash(text: string): Hash | null {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  // Always true: the pattern above admits exactly 43 base64 characters and "=", which always decode to
  // 32 bytes (false, always null, is killed by the round-trip tests but goes with it).
  // Stryker disable next-line ConditionalExpression: equivalent when true (above)
  return bytes.length === 32 ? bytes : null;
}
