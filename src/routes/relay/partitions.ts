import type { EntityManager } from '@mikro-orm/postgresql';
import { caseRequester } from '../../db/owners.ts';
import type { Actor } from '../../pipeline/command.ts';

/** Relay partitions are per requester (handles never change), so each case's changes apply in order. */
export const relayPartition = (handle: string): string => `relay:${handle}`;

export const requesterPartition = (_params: unknown, actor: Actor | null): string => relayPartition(actor?.handle ?? 'anonymous');

/**
 * Actions on an existing case, whoever sends them (requester or operator),
 * run in the partition of the case's requester. An unknown reference still
 * needs a partition: the command then answers 404.
 */
export function casePartition<P>(referenceOf: (params: P) => string) {
  return async (params: P, actor: Actor | null, db: () => EntityManager): Promise<string> => {
    return relayPartition((await caseRequester(db(), referenceOf(params))) ?? actor?.handle ?? 'anonymous');
  };
}
