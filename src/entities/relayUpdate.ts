import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { relayStatuses } from './relayCase.ts';

/** Who may read an update: `agent` (the requester and operators) or `operator` (operators only). */
export const relayVisibilities = ['agent', 'operator'] as const;
export type RelayVisibility = (typeof relayVisibilities)[number];

/** Whether the author wrote as the case's requester or as an operator. */
export const relayAuthorRoles = ['agent', 'operator'] as const;
export type RelayAuthorRole = (typeof relayAuthorRoles)[number];

/**
 * One entry of a case's history: a message, a status change, or both.
 * `status` is the status the case took with this entry (null for a plain message).
 */
export const RelayUpdate = defineEntity({
  name: 'RelayUpdate',
  tableName: 'relay_update',
  uniques: [{ properties: ['caseReference', 'sequence'] }],
  properties: {
    id: p.string().primary(),
    caseReference: p.string(),
    sequence: p.integer(),
    authorId: p.string(),
    authorHandle: p.string(),
    authorRole: p.enum(relayAuthorRoles),
    visibility: p.enum(relayVisibilities),
    status: p.enum(relayStatuses).nullable(),
    body: p.text().nullable(),
    createdAt: p.datetime(),
  },
});
export type RelayUpdate = InferEntity<typeof RelayUpdate>;
