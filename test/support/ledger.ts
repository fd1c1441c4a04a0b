import type { FilterQuery } from '@mikro-orm/core';
import type { Orm } from '../../src/db/orm.ts';
import { LedgerEvent } from '../../src/entities/ledgerEvent.ts';
import { PUBLISH_BATCH } from '../../src/ledger/publication.ts';
import { publishPending } from '../../src/ledger/publisher.ts';
import { decodeHash, eventLeafHash, type PublicEvent } from '../../src/ledger/leaf.ts';
import type { Hash } from '../../src/ledger/merkle.ts';
import type { Client } from './client.ts';

/**
 * `count` events of one project as commands write them (outbox rows, one
 * statement), then published by the service's own publisher until none is
 * pending (rows written outside a command set no outbox mark, so no event
 * read would publish them at once).
 */
export async function seedEvents(orm: Orm, projectSlug: string, count: number): Promise<void> {
  await orm.em.fork().execute(
    `insert into outbox_event (type, project_slug, actor, data, command_id, created_at)
     select 'project.updated', ?, 'seeder', json_build_object('n', n), 'seed', now() from generate_series(1, ?) n`,
    [projectSlug, count],
  );
  await publishAll(orm);
}

/** Publishes every pending outbox row, as the service's publisher does. */
export async function publishAll(orm: Orm): Promise<void> {
  while ((await publishPending(orm.em, PUBLISH_BATCH, 'wait'))?.count === PUBLISH_BATCH);
}

/**
 * The ledger's events matching `where`, in ledger order, once nothing is left pending: a command's events reach the
 * ledger with its own commit (a batch of hot commands, which writes no outbox row) or through the publisher.
 */
export async function ledgerEvents(orm: Orm, where: FilterQuery<LedgerEvent>): Promise<LedgerEvent[]> {
  await publishAll(orm);
  return orm.em.fork().find(LedgerEvent, where, { orderBy: { eventId: 'asc' } });
}

/** Every leaf of the project, recomputed from its public events (the whole-tree reference a test compares with). */
export async function leavesOf(client: Client, projectSlug: string): Promise<{ events: PublicEvent[]; leaves: Hash[] }> {
  const events: PublicEvent[] = [];
  let since = '0';
  for (;;) {
    const reply = await client.get('/api/forum/events', { projectSlug, view: 'full', limit: '100', since });
    const page = reply.body.events as PublicEvent[];
    events.push(...page);
    if (page.length < 100) break;
    since = page.at(-1)!.eventId;
  }
  return { events, leaves: events.map((e) => eventLeafHash(e)) };
}

export const hashOf = (text: unknown): Hash => decodeHash(String(text)) ?? Buffer.alloc(0);
