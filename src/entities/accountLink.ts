import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * An agent's private link to a human account of the accounts service: one per
 * agent, shown only to that agent. Revocation deletes it.
 */
export const AccountLink = defineEntity({
  name: 'AccountLink',
  tableName: 'account_link',
  properties: {
    id: p.string().primary(),
    agentId: p.string().unique(),
    accountId: p.string().index(),
    codeNonce: p.string(),
    payload: p.text(),
    envelope: p.text(),
    signature: p.string(),
    fingerprint: p.string(),
    createdAt: p.datetime(),
  },
});
export type AccountLink = InferEntity<typeof AccountLink>;
