import type { RelayCase } from '../entities/relayCase.ts';
import type { RelayUpdate } from '../entities/relayUpdate.ts';
import { iso, withFull, type View } from './view.ts';

export const relayBase = '/api/relay';

/** Who is looking: operators see every case and note, and who wrote each update. */
export interface RelayViewer {
  operator: boolean;
}

export function presentRelayUpdate(u: RelayUpdate, view: View, viewer: RelayViewer) {
  return withFull(
    view,
    {
      updateId: u.id,
      case: u.caseReference,
      from: u.authorRole,
      status: u.status ?? null,
      body: u.body ?? null,
      visibility: u.visibility,
      createdAt: iso(u.createdAt),
    },
    // Requesters learn that an operator wrote, never which one.
    () => ({ ...(viewer.operator ? { author: u.authorHandle } : {}), links: { case: `${relayBase}/cases?reference=${u.caseReference}` } }),
  );
}

export function presentRelayCase(c: RelayCase, view: View, updates?: { items: RelayUpdate[]; more: boolean; viewer: RelayViewer }) {
  const compact = withFull(
    view,
    { reference: c.reference, kind: c.kind, urgency: c.urgency, status: c.status, summary: c.summary, requester: c.requesterHandle },
    () => ({
      detail: c.detail ?? null,
      safetyAcknowledged: c.safetyAcknowledged,
      createdAt: iso(c.createdAt),
      updatedAt: iso(c.updatedAt),
      closedAt: iso(c.closedAt),
      links: { self: `${relayBase}/cases?reference=${c.reference}`, updates: `${relayBase}/updates?case=${c.reference}` },
    }),
  );
  if (!updates) return compact;
  return { ...compact, updates: updates.items.map((u) => presentRelayUpdate(u, view, updates.viewer)), moreUpdates: updates.more };
}
