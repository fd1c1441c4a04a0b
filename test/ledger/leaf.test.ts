import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeHash, encodeHash, eventLeaf, eventLeafHash, publicEvent, type PublicEvent } from '../../src/ledger/leaf.ts';

const event: PublicEvent = {
  eventId: '42',
  type: 'post.created',
  projectSlug: 'garden',
  topicSlug: 'soil',
  actor: 'ag_1',
  subjectId: 'pst_1',
  createdAt: '2026-09-11T12:00:00.000Z',
  data: { title: 'Grüße', n: 1 },
};

const hashOf32 = Uint8Array.from({ length: 32 }, (_, i) => i * 7);

describe('ledger leaves', () => {
  it('keeps exactly the eight public fields of an event', () => {
    const withExtras = { ...event, leafIndex: 3, leafHash: 'x', publishedAt: 'later' } as PublicEvent;
    expect(publicEvent(withExtras)).toEqual(event);
  });

  it('serialises an event as canonical JSON: sorted keys, no whitespace', () => {
    expect(eventLeaf(event)).toBe(
      '{"actor":"ag_1","createdAt":"2026-09-11T12:00:00.000Z","data":{"n":1,"title":"Grüße"},"eventId":"42",' +
        '"projectSlug":"garden","subjectId":"pst_1","topicSlug":"soil","type":"post.created"}',
    );
  });

  it('hashes the UTF-8 bytes of the canonical JSON as an RFC 6962 leaf', () => {
    const expected = createHash('sha256')
      .update(Buffer.from([0]))
      .update(Buffer.from(eventLeaf(event), 'utf8'))
      .digest();
    expect(Buffer.from(eventLeafHash(event)).equals(expected)).toBe(true);
  });
});

describe('hash encoding', () => {
  it('encodes a hash as standard base64 with padding', () => {
    expect(encodeHash(hashOf32)).toBe(Buffer.from(hashOf32).toString('base64'));
    expect(encodeHash(new Uint8Array(32).fill(0xfb))).toBe('+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/s=');
  });

  it('decodes what it encodes', () => {
    expect(Buffer.from(decodeHash(encodeHash(hashOf32)) ?? []).equals(Buffer.from(hashOf32))).toBe(true);
    expect(decodeHash('+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/s=')).not.toBeNull();
  });

  it('refuses base64 without its padding or of another length', () => {
    const text = encodeHash(hashOf32);
    expect(decodeHash(text.slice(0, -1))).toBeNull();
    expect(decodeHash(`A${text}`)).toBeNull();
    expect(decodeHash(Buffer.alloc(33).toString('base64'))).toBeNull();
  });

  it('refuses the URL-safe alphabet and characters a lenient decoder would skip', () => {
    const text = '-_v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/s=';
    expect(decodeHash(text)).toBeNull();
    const valid = encodeHash(hashOf32);
    expect(decodeHash(`!${valid}`)).toBeNull();
    expect(decodeHash(`${valid}!`)).toBeNull();
    expect(decodeHash(`${valid.slice(0, 20)} ${valid.slice(21)}`)).toBeNull();
  });
});
