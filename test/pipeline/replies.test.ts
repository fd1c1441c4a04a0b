import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeReplies, ReplyListener } from '../../src/pipeline/replies.ts';
import { connectRedis } from '../../src/redis.ts';
import { useTestApp } from '../support/testApp.ts';

const t = useTestApp();
let channel: string;
let listener: ReplyListener;

beforeAll(async () => {
  channel = `${t.settings.redisPrefix}:replies:${randomUUID()}`;
  listener = new ReplyListener(connectRedis(t.settings, 'replies-test', 'subscriber'), channel);
  await listener.start();
});
afterAll(() => listener.stop());

const ok = (n: number) => ({ status: 200, body: { n } });

describe('an API instance’s reply channel', () => {
  it('settles every command of a batch from the one message its worker publishes for them', async () => {
    const waiting = ['cmd_a', 'cmd_b', 'cmd_c'].map((id) => listener.wait(id, 5000));
    await t.redis.publish(channel, encodeReplies([0, 1, 2].map((n) => ({ commandId: `cmd_${'abc'[n]}`, result: ok(n) }))));
    await expect(Promise.all(waiting)).resolves.toEqual([ok(0), ok(1), ok(2)]);
  });

  it('still settles a command from the single reply an older worker publishes', async () => {
    const waiting = listener.wait('cmd_single', 5000);
    await t.redis.publish(channel, JSON.stringify({ commandId: 'cmd_single', result: ok(7) }));
    await expect(waiting).resolves.toEqual(ok(7));
  });

  it('drops a message it cannot read and still settles the well-formed replies beside a malformed one', async () => {
    const unread = listener.wait('cmd_unread', 300);
    const kept = listener.wait('cmd_kept', 5000);
    await t.redis.publish(channel, '{"replies": not json');
    await t.redis.publish(channel, JSON.stringify({ replies: [{ commandId: 'cmd_unread' }, { commandId: 'cmd_kept', result: ok(1) }] }));
    await expect(kept).resolves.toEqual(ok(1));
    // Its waiter times out (null) and the API then looks the result up in processed_command.
    await expect(unread).resolves.toBeNull();
  });
});
