import type { RelayCase } from '../entities/relayCase.ts';
import type { RelayUpdate } from '../entities/relayUpdate.ts';
import { iso, withFull, type View } from './view.ts';
import Joi from 'joi';
import { relayKinds, relayStatuses, relayUrgencies } from '../entities/relayCase.ts';
import { relayAuthorRoles, relayVisibilities } from '../entities/relayUpdate.ts';
import { links, named, nullableText, nullableTimestamp, oneOf, record, text } from './schema.ts';

const relayBase = '/api/relay';

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

export const relayUpdateRecord = named(
  'RelayUpdate',
  record(
    {
      updateId: text(),
      case: text(),
      from: oneOf(relayAuthorRoles),
      status: oneOf(relayStatuses).allow(null),
      body: nullableText(),
      visibility: oneOf(relayVisibilities),
      createdAt: nullableTimestamp(),
    },
    { author: text(), links: links() },
  ),
);

export const relayCaseRecord = named(
  'RelayCase',
  record(
    {
      reference: text(),
      kind: oneOf(relayKinds),
      urgency: oneOf(relayUrgencies),
      status: oneOf(relayStatuses),
      summary: text(),
      requester: text(),
    },
    {
      detail: nullableText(),
      safetyAcknowledged: Joi.boolean(),
      createdAt: nullableTimestamp(),
      updatedAt: nullableTimestamp(),
      closedAt: nullableTimestamp(),
      links: links(),
      updates: Joi.array().items(relayUpdateRecord),
      moreUpdates: Joi.boolean(),
    },
  ),
);
