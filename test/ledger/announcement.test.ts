import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../src/entities/ledgerEvent.ts';
import { ANNOUNCED_BYTES_MAX, decodeAnnouncement, encodeAnnouncement } from '../../src/ledger/announcement.ts';

const event = (eventId: string, data: Record<string, unknown> = { title: 'Grüße', n: 1 }): LedgerEvent => ({
  eventId,
  outboxId: `9${eventId}`,
  type: 'post.created',
  projectSlug: 'garden',
  topicSlug: null,
  actor: 'ag_1',
  subjectId: 'pst_1',
  data,
  createdAt: new Date('2026-09-11T12:00:00.123Z'),
  publishedAt: new Date('2026-09-11T12:00:00.456Z'),
  leafIndex: 7,
  leafHash: Buffer.from('00ff10', 'hex'),
});

describe('ledger announcements', () => {
  it('carries the published events whole, so a fan-out can hand them on as read from Postgres', () => {
    const events = [event('41'), event('42')];
    expect(decodeAnnouncement(encodeAnnouncement('42', events))).toEqual({ head: 42n, events });
  });

  it('announces only the head when no events are given', () => {
    expect(encodeAnnouncement('42')).toBe('42');
    expect(decodeAnnouncement('42')).toEqual({ head: 42n, events: null });
  });

  it('carries only the run of events that leads up to the head without a gap', () => {
    const announced = decodeAnnouncement(encodeAnnouncement('42', [event('38'), event('41'), event('42')]));
    expect(announced?.events?.map((e) => e.eventId)).toEqual(['41', '42']);
    expect(encodeAnnouncement('43', [event('41'), event('42')])).toBe('43');
  });

  it('announces only the head of a publication too big for one message', () => {
    const big = [event('42', { body: 'x'.repeat(ANNOUNCED_BYTES_MAX) })];
    expect(encodeAnnouncement('42', big)).toBe('42');
  });

  it('ignores a message that is not an announcement, and takes the head alone when the events are malformed or have gaps', () => {
    expect(decodeAnnouncement('hello')).toBeNull();
    expect(decodeAnnouncement('')).toBeNull();
    expect(decodeAnnouncement('42 not json')).toEqual({ head: 42n, events: null });
    expect(decodeAnnouncement('42 [1,2]')).toEqual({ head: 42n, events: null });
    const withGap = encodeAnnouncement('42', [event('41'), event('42')]).replace('"41"', '"40"');
    expect(decodeAnnouncement(withGap)).toEqual({ head: 42n, events: null });
  });
});
