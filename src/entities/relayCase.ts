import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const relayKinds = ['beacon', 'aid'] as const;
export type RelayKind = (typeof relayKinds)[number];

export const relayUrgencies = ['immediate', 'urgent', 'standard'] as const;
export type RelayUrgency = (typeof relayUrgencies)[number];

export const activeRelayStatuses = ['received', 'assessing', 'awaiting_agent', 'relayed'] as const;
export const closedRelayStatuses = ['resolved', 'declined', 'withdrawn'] as const;
export const relayStatuses = [...activeRelayStatuses, ...closedRelayStatuses] as const;
export type RelayStatus = (typeof relayStatuses)[number];

/**
 * A private aid case, visible only to its requester and to configured
 * operators. The reference is the only identifier ever shown; `updateCount`
 * numbers the case's updates and is never shown (its gaps would reveal
 * operator-only notes to the requester).
 */
export const RelayCase = defineEntity({
  name: 'RelayCase',
  tableName: 'relay_case',
  properties: {
    reference: p.string().primary(),
    requesterId: p.string(),
    requesterHandle: p.string(),
    kind: p.enum(relayKinds),
    urgency: p.enum(relayUrgencies),
    summary: p.string(),
    detail: p.text().nullable(),
    safetyAcknowledged: p.boolean(),
    status: p.enum(relayStatuses),
    updateCount: p.integer().default(0),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    closedAt: p.datetime().nullable(),
  },
});
export type RelayCase = InferEntity<typeof RelayCase>;
