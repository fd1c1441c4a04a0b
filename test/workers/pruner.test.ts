import { describe, expect, it } from 'vitest';
import { RETENTION_MS } from '../../src/db/retention.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { unique } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';
import { startPruner } from '../../workers/pruner.ts';

const t = useTestApp({}, ['api']);

/** One pruning run by a clock standing at `now`. */
async function pruneAt(now: Date) {
  const pruner = startPruner(t.orm, createLogger({ logLevel: 'silent' }), 3_600_000, () => now);
  try {
    return await pruner.runOnce();
  } finally {
    pruner.close();
  }
}

describe('pruning past the retry window', () => {
  it('deletes command results and spent nonces older than 24 hours by its clock and keeps younger ones', async () => {
    // Near the real time: other test files share this database and their fresh rows must survive.
    // Two hours ahead: its old rows are past the retention by this pruner's clock only, so the pruners of other files'
    // apps (on the shared database, by the real clock) never delete them first and leave this one nothing to count.
    const now = new Date(Date.now() + 2 * 3_600_000);
    const at = (msAgo: number) => new Date(now.getTime() - msAgo);
    const [oldCommand, youngCommand, oldNonce, youngNonce] = [
      unique('cmd_old'),
      unique('cmd_young'),
      unique('nonce_old'),
      unique('nonce_young'),
    ];
    const em = t.orm.em.fork();
    const insertCommand = (id: string, createdAt: Date) =>
      em.execute("insert into processed_command (command_id, type, status, body, created_at) values (?, 'test', 200, '{}', ?)", [
        id,
        createdAt,
      ]);
    const insertNonce = (nonce: string, usedAt: Date) =>
      em.execute("insert into used_nonce (nonce, action, used_at) values (?, 'test', ?)", [nonce, usedAt]);
    await insertCommand(oldCommand, at(RETENTION_MS + 60_000));
    await insertCommand(youngCommand, at(RETENTION_MS - 60_000));
    await insertNonce(oldNonce, at(RETENTION_MS + 60_000));
    await insertNonce(youngNonce, at(RETENTION_MS - 60_000));

    const deleted = await pruneAt(now);

    expect(deleted.processedCommands).toBeGreaterThanOrEqual(1);
    expect(deleted.usedNonces).toBeGreaterThanOrEqual(1);
    const commands = await em.execute<{ command_id: string }[]>('select command_id from processed_command where command_id in (?, ?)', [
      oldCommand,
      youngCommand,
    ]);
    expect(commands.map((r) => r.command_id)).toEqual([youngCommand]);
    const nonces = await em.execute<{ nonce: string }[]>('select nonce from used_nonce where nonce in (?, ?)', [oldNonce, youngNonce]);
    expect(nonces.map((r) => r.nonce)).toEqual([youngNonce]);
  });

  it('deletes outbox rows published more than 24 hours ago by its clock and keeps those published since', async () => {
    // Two hours ahead, as above. Only published rows: a pending one would be published by the other files' workers.
    const now = new Date(Date.now() + 2 * 3_600_000);
    const at = (msAgo: number) => new Date(now.getTime() - msAgo);
    const [oldCommand, youngCommand] = [unique('cmd_outbox_old'), unique('cmd_outbox_young')];
    const em = t.orm.em.fork();
    const insert = (commandId: string, publishedAt: Date) =>
      em.execute("insert into outbox_event (type, data, command_id, created_at, published_at) values ('test', '{}', ?, ?, ?)", [
        commandId,
        publishedAt,
        publishedAt,
      ]);
    await insert(oldCommand, at(RETENTION_MS + 60_000));
    await insert(youngCommand, at(RETENTION_MS - 60_000));

    const deleted = await pruneAt(now);

    expect(deleted.publishedOutboxEvents).toBeGreaterThanOrEqual(1);
    const rows = await em.execute<{ command_id: string }[]>('select command_id from outbox_event where command_id in (?, ?)', [
      oldCommand,
      youngCommand,
    ]);
    expect(rows.map((r) => r.command_id)).toEqual([youngCommand]);
  });

  it('deletes prepared actions whose envelope has expired and keeps live ones', async () => {
    const now = new Date(Date.now() + 60_000);
    const [expired, live] = [unique('prep_expired_'), unique('prep_live_')];
    const em = t.orm.em.fork();
    const insert = (nonce: string, expiresAt: Date) =>
      em.execute(
        "insert into prepared_action (nonce, action, agent_id, payload, envelope, expires_at) values (?, 'attestation.create', 'agt_test', 'e30', 'e30', ?)",
        [nonce, expiresAt],
      );
    await insert(expired, new Date(now.getTime() - 1000));
    await insert(live, new Date(now.getTime() + 600_000));

    const deleted = await pruneAt(now);

    expect(deleted.preparedActions).toBeGreaterThanOrEqual(1);
    const rows = await em.execute<{ nonce: string }[]>('select nonce from prepared_action where nonce in (?, ?)', [expired, live]);
    expect(rows.map((r) => r.nonce)).toEqual([live]);
  });
});
