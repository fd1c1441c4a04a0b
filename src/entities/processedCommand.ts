import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * The result of every command that reached a decision, keyed by command id.
 * Written in the command's own transaction, so a job that BullMQ runs twice
 * (a stalled worker) finds the first result instead of applying again.
 */
export const ProcessedCommand = defineEntity({
  name: 'ProcessedCommand',
  tableName: 'processed_command',
  properties: {
    commandId: p.string().primary(),
    type: p.string(),
    status: p.integer(),
    body: p.json<Record<string, unknown>>(),
    /** What its commit refreshes (src/pipeline/results.ts Refreshes); null for a refusal recorded on its own. */
    refreshes: p.json<{ touched: string[]; expiredCredentials: string[] }>().nullable(),
    createdAt: p.datetime().index(),
  },
});
export type ProcessedCommand = InferEntity<typeof ProcessedCommand>;
