import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inject } from 'vitest';
import { openOrm, type Orm } from '../../src/db/orm.ts';
import { LedgerEvent } from '../../src/entities/ledgerEvent.ts';
import { eventLeafHash } from '../../src/ledger/leaf.ts';
import { publishForReader, publishPending, type PublicationMarks } from '../../src/ledger/publisher.ts';
import { unique } from '../support/client.ts';
import { beginHeld } from '../support/heldTransaction.ts';

let orm: Orm;
beforeAll(async () => {
  orm = await openOrm(inject('databaseUrl'), { poolMax: 4 });
});
afterAll(async () => {
  await orm.close();
});

/** An outbox row as a command writes it, in a transaction the test controls. */
async function insertOutbox(em: ReturnType<Orm['em']['fork']>, projectSlug: string, n: number): Promise<string> {
  const [row] = await em.execute<{ id: string }[]>(
    `insert into outbox_event (type, project_slug, actor, data, command_id, created_at) values ('project.updated', ?, ` +
      `'tester', ?, 'direct', now()) returning id::text as id`,
    [projectSlug, JSON.stringify({ n })],
  );
  return row!.id;
}

const ledgerRow = (outboxId: string) => orm.em.fork().findOneOrFail(LedgerEvent, { outboxId });

describe('ledger publisher', () => {
  it('gives a late-committing outbox row a greater event id than rows published before it committed', async () => {
    const projectSlug = unique('late-');
    const slow = orm.em.fork();
    await beginHeld(slow);
    const early = await insertOutbox(slow, projectSlug, 1);
    const fast = orm.em.fork();
    const later = await fast.transactional((tx) => insertOutbox(tx, projectSlug, 2));
    expect(BigInt(early)).toBeLessThan(BigInt(later));

    await publishPending(orm.em, 500, 'wait');
    const published = await ledgerRow(later);
    await slow.commit();
    await publishPending(orm.em, 500, 'wait');
    const late = await ledgerRow(early);

    // The smaller outbox id committed last, so it is published after: a reader past `published` still gets it.
    expect(BigInt(late.eventId)).toBeGreaterThan(BigInt(published.eventId));
    expect(late.leafIndex).toBe(1);
    expect(published.leafIndex).toBe(0);
  });

  it('publishes each outbox row once, marks it published and stores the leaf of its public representation', async () => {
    const projectSlug = unique('once-');
    const outboxId = await orm.em.fork().transactional((tx) => insertOutbox(tx, projectSlug, 3));
    await Promise.all([publishPending(orm.em, 500, 'wait'), publishPending(orm.em, 500, 'wait'), publishPending(orm.em)]);
    expect(await orm.em.fork().count(LedgerEvent, { outboxId })).toBe(1);
    const [outbox] = await orm.em
      .fork()
      .execute<{ published: boolean }[]>('select published_at is not null as published from outbox_event where id = ?', [outboxId]);
    expect(outbox?.published).toBe(true);
    const row = await ledgerRow(outboxId);
    const leaf = eventLeafHash({
      eventId: row.eventId,
      type: 'project.updated',
      projectSlug,
      topicSlug: null,
      actor: 'tester',
      subjectId: null,
      createdAt: row.createdAt.toISOString(),
      data: { n: 3 },
    });
    expect(Buffer.from(row.leafHash!).equals(Buffer.from(leaf))).toBe(true);
  });

  it('assigns gapless event ids and dense leaf indexes per project across concurrent publishers', async () => {
    const slugs = [unique('dense-'), unique('dense-')];
    await orm.em.fork().transactional(async (tx) => {
      for (let i = 0; i < 30; i++) await insertOutbox(tx, slugs[i % 2]!, i);
    });
    await Promise.all([
      publishPending(orm.em, 7, 'wait'),
      publishPending(orm.em, 7, 'wait'),
      publishPending(orm.em, 7, 'wait'),
      publishPending(orm.em, 500, 'wait'),
    ]);
    for (const projectSlug of slugs) {
      const rows = await orm.em.fork().find(LedgerEvent, { projectSlug }, { orderBy: { eventId: 'asc' } });
      expect(rows.map((r) => r.leafIndex)).toEqual(Array.from({ length: 15 }, (_, i) => i));
      expect(rows.map((r) => r.data.n)).toEqual(Array.from({ length: 15 }, (_, i) => 2 * i + (projectSlug === slugs[0] ? 0 : 1)));
    }
    const [gaps] = await orm.em
      .fork()
      .execute<{ ok: boolean }[]>('select count(*) = max(event_id) - min(event_id) + 1 as ok from ledger_event');
    expect(gaps?.ok).toBe(true);
  });

  it('lets a reader wait for the publisher holding the lock, then publish what that publication missed, before it answers', async () => {
    const projectSlug = unique('reader-');
    // A publisher mid-publication (its snapshot predates the row): it holds the lock and will publish nothing.
    // The lock comes first, so that no other test's publisher can publish the row before the reader looks.
    const publisher = orm.em.fork();
    await beginHeld(publisher);
    await publisher.execute('select pg_advisory_xact_lock(?, ?)', [0x4c454447, 1]);
    const outboxId = await orm.em.fork().transactional((tx) => insertOutbox(tx, projectSlug, 4));
    const announced: string[] = [];
    const marks: PublicationMarks = {
      read: async () => ({ dirty: 'd', head: null }),
      published: async (head) => {
        announced.push(head);
        return { dirty: null, head };
      },
    };
    // The reader on a one-connection pool of its own, so its backend is known: other tests' readers may wait on the lock too.
    const readerOrm = await openOrm(inject('databaseUrl'), { poolMax: 1 });
    let answered = false;
    let reader: Promise<string> | null = null;
    try {
      const [{ pid: readerPid } = { pid: 0 }] = await readerOrm.em.fork().execute<{ pid: number }[]>('select pg_backend_pid() as pid');
      reader = publishForReader(readerOrm.em, marks, 'd').then((head) => {
        answered = true;
        return head;
      });
      await vi.waitFor(
        async () => {
          const waiting = await orm.em
            .fork()
            .execute<{ n: number }[]>(
              "select count(*)::int as n from pg_locks where pid = ? and locktype = 'advisory' and not granted and classid = ? and objid = ?",
              [readerPid, 0x4c454447, 1],
            );
          if ((waiting[0]?.n ?? 0) < 1) throw new Error('the reader is not waiting on the ledger lock yet');
        },
        { timeout: 10_000, interval: 20 },
      );
      expect(answered).toBe(false);
    } finally {
      // Never leave the ledger lock held: every other reader of the suite would wait on it.
      await publisher.commit();
    }
    let head: string;
    try {
      if (!reader) throw new Error('the reader never started');
      head = await reader;
    } finally {
      await readerOrm.close();
    }
    const row = await ledgerRow(outboxId);
    expect(BigInt(head)).toBeGreaterThanOrEqual(BigInt(row.eventId));
    expect(announced).toEqual([head]);
  });
});
