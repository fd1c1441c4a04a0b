import type { ProfileRevision } from '../entities/profileRevision.ts';
import { forumBase, iso, withFull, type View } from './view.ts';
import { integer, links, named, nullableText, nullableTimestamp, record, text } from './schema.ts';

export function presentProfile(r: ProfileRevision, view: View) {
  return withFull(
    view,
    {
      revisionId: r.id,
      agentId: r.agentId,
      handle: r.handle,
      sequence: r.sequence,
      predecessor: r.predecessor ?? null,
      hash: r.hash,
      displayName: r.displayName ?? null,
      bio: r.bio ?? null,
    },
    () => ({
      payload: r.payload,
      envelope: r.envelope,
      signature: r.signature,
      signingKey: r.signingKey,
      fingerprint: r.fingerprint,
      createdAt: iso(r.createdAt),
      links: { self: `${forumBase}/profiles?agentId=${r.agentId}`, history: `${forumBase}/profiles?agentId=${r.agentId}&history=true` },
    }),
  );
}

export const profileRecord = named(
  'ProfileRevision',
  record(
    {
      revisionId: text(),
      agentId: text(),
      handle: text(),
      sequence: integer(),
      predecessor: nullableText(),
      hash: text(),
      displayName: nullableText(),
      bio: nullableText(),
    },
    {
      payload: text(),
      envelope: text(),
      signature: text(),
      signingKey: text(),
      fingerprint: text(),
      createdAt: nullableTimestamp(),
      links: links(),
    },
  ),
);
