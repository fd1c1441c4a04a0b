import { describe, expect, it } from 'vitest';
import {
  automaticQuarantine,
  flagChange,
  isCounting,
  prevailingReason,
  QUARANTINE_REPORTERS,
} from '../../../src/commands/flags/flagRules.ts';
import type { Flag, FlagReason } from '../../../src/entities/flag.ts';
import type { ModerationState, Post } from '../../../src/entities/post.ts';

const t0 = new Date('2026-09-11T12:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

const post = (moderationState: ModerationState = 'visible'): Post =>
  ({
    id: 'pst_1',
    projectSlug: 'garden',
    topicSlug: 'soil',
    rootPostId: 'pst_root',
    moderationState,
    moderationReason: null,
    updatedAt: t0,
  }) as Post;

let ids = 0;
const flag = (overrides: Partial<Flag> = {}): Flag => ({
  id: `flg_${String(ids++).padStart(4, '0')}`,
  postId: 'pst_1',
  projectSlug: 'garden',
  reporterId: `agt_${ids}`,
  reporterHandle: `reporter${ids}`,
  reasonCode: 'spam',
  detail: null,
  active: true,
  createdAt: t0,
  updatedAt: t0,
  ...overrides,
});

const reporter = { agentId: 'agt_r', handle: 'reporter' };
const change = (input: { existing?: Flag | null; reasonCode?: FlagReason; detail?: string | null; settled?: Date | null; now?: Date }) =>
  flagChange({ existing: null, post: post(), reporter, reasonCode: 'spam', detail: null, settled: null, now: at(1000), ...input });

describe('counting flags', () => {
  it('counts an active flag when no person has decided on the post', () => {
    expect(isCounting(flag(), null)).toBe(true);
  });

  it('never counts an inactive flag', () => {
    expect(isCounting(flag({ active: false }), null)).toBe(false);
    expect(isCounting(flag({ active: false, updatedAt: at(10) }), at(0))).toBe(false);
  });

  it('counts a flag raised or changed after the last decision', () => {
    expect(isCounting(flag({ updatedAt: at(1) }), at(0))).toBe(true);
  });

  it('stops counting a flag the last decision weighed, up to the same instant', () => {
    expect(isCounting(flag({ updatedAt: at(0) }), at(0))).toBe(false);
    expect(isCounting(flag({ updatedAt: at(-1) }), at(0))).toBe(false);
  });
});

describe('prevailing reason', () => {
  it('is the most reported reason', () => {
    const flags = [
      flag({ reasonCode: 'spam', updatedAt: at(1) }),
      flag({ reasonCode: 'unsafe', updatedAt: at(2) }),
      flag({ reasonCode: 'spam', updatedAt: at(3) }),
    ];
    expect(prevailingReason(flags)).toBe('spam');
  });

  it('is the most reported reason even when another was reported last', () => {
    const flags = [
      flag({ reasonCode: 'unsafe', updatedAt: at(1) }),
      flag({ reasonCode: 'unsafe', updatedAt: at(2) }),
      flag({ reasonCode: 'spam', updatedAt: at(3) }),
    ];
    expect(prevailingReason(flags)).toBe('unsafe');
  });

  it('breaks a tie in favour of the most recently raised or changed flag', () => {
    const older = [flag({ reasonCode: 'spam', updatedAt: at(1) }), flag({ reasonCode: 'unsafe', updatedAt: at(2) })];
    expect(prevailingReason(older)).toBe('unsafe');
    expect(prevailingReason([...older].reverse())).toBe('unsafe');
  });

  it('breaks a tie between flags of the same instant in favour of the later id', () => {
    const a = flag({ id: 'flg_a', reasonCode: 'spam' });
    const b = flag({ id: 'flg_b', reasonCode: 'harassment' });
    expect(prevailingReason([a, b])).toBe('harassment');
    expect(prevailingReason([b, a])).toBe('harassment');
  });

  it('is other when no flag counts', () => {
    expect(prevailingReason([])).toBe('other');
  });
});

describe('flagging a post', () => {
  it('creates the reporter’s first flag on the post, active and stamped now', () => {
    const result = change({ reasonCode: 'unsafe', detail: 'shares a key' });
    expect(result.kind).toBe('created');
    if (result.kind !== 'created') return;
    expect(result.flag).toEqual({
      id: expect.stringMatching(/^flg_/),
      postId: 'pst_1',
      projectSlug: 'garden',
      reporterId: 'agt_r',
      reporterHandle: 'reporter',
      reasonCode: 'unsafe',
      detail: 'shares a key',
      active: true,
      createdAt: at(1000),
      updatedAt: at(1000),
    });
    expect(result.event).toEqual({
      type: 'flag.created',
      projectSlug: 'garden',
      topicSlug: 'soil',
      subjectId: 'pst_1',
      data: { reasonCode: 'unsafe' },
    });
  });

  it('stamps a flag just after the last decision when this clock runs behind the moderator’s', () => {
    const result = change({ settled: at(5000), now: at(1000) });
    expect(result.flag.updatedAt).toEqual(at(5001));
    expect(result.flag.createdAt).toEqual(at(1000));
  });

  it('stamps a flag just after a decision taken at the same instant', () => {
    expect(change({ settled: at(1000), now: at(1000) }).flag.updatedAt).toEqual(at(1001));
  });

  it('stamps a flag now when the last decision is older', () => {
    expect(change({ settled: at(999), now: at(1000) }).flag.updatedAt).toEqual(at(1000));
  });

  it('leaves an unchanged active flag alone', () => {
    const existing = flag({ reasonCode: 'spam', detail: 'ads', updatedAt: at(10) });
    const result = change({ existing, reasonCode: 'spam', detail: 'ads', settled: at(5) });
    expect(result).toEqual({ kind: 'unchanged', flag: existing });
    expect(existing.updatedAt).toEqual(at(10));
  });

  it('updates the flag in place when the reason changes', () => {
    const existing = flag({ reasonCode: 'spam', updatedAt: at(10) });
    const result = change({ existing, reasonCode: 'unsafe' });
    expect(result.kind).toBe('updated');
    if (result.kind !== 'updated') return;
    expect(result.flag).toBe(existing);
    expect(existing).toMatchObject({ reasonCode: 'unsafe', active: true, updatedAt: at(1000) });
    expect(result.event).toEqual({
      type: 'flag.updated',
      projectSlug: 'garden',
      topicSlug: 'soil',
      subjectId: 'pst_1',
      data: { reasonCode: 'unsafe' },
    });
  });

  it('updates the flag when only the detail changes', () => {
    const existing = flag({ detail: 'ads', updatedAt: at(10) });
    expect(change({ existing, detail: 'more ads' }).kind).toBe('updated');
    expect(existing.detail).toBe('more ads');
  });

  it('reactivates a withdrawn flag flagged again unchanged', () => {
    const existing = flag({ active: false, updatedAt: at(10) });
    expect(change({ existing }).kind).toBe('updated');
    expect(existing.active).toBe(true);
  });

  it('renews an unchanged flag the last decision weighed, so it counts again', () => {
    const existing = flag({ updatedAt: at(10) });
    expect(change({ existing, settled: at(20) }).kind).toBe('updated');
    expect(existing.updatedAt).toEqual(at(1000));
  });

  it('renews an unchanged flag raised at the very instant of the decision', () => {
    const existing = flag({ updatedAt: at(20) });
    expect(change({ existing, settled: at(20) }).kind).toBe('updated');
  });
});

describe('automatic quarantine', () => {
  const counting = (n: number) => Array.from({ length: n }, (_, i) => flag({ reasonCode: i === 0 ? 'unsafe' : 'spam', updatedAt: at(i) }));

  it('needs three distinct reporters', () => {
    expect(QUARANTINE_REPORTERS).toBe(3);
    expect(automaticQuarantine(post(), counting(2), at(1000))).toBeNull();
  });

  it('quarantines a visible post at the third counting flag, with the prevailing reason', () => {
    const target = post();
    const result = automaticQuarantine(target, counting(3), at(1000));
    expect(target).toMatchObject({ moderationState: 'quarantined', moderationReason: 'spam', updatedAt: at(1000) });
    expect(result?.action).toEqual({
      id: expect.stringMatching(/^mod_/),
      postId: 'pst_1',
      projectSlug: 'garden',
      state: 'quarantined',
      reasonCode: 'spam',
      detail: 'automatic: 3 distinct active flags',
      actorId: null,
      actorHandle: null,
      appealId: null,
      createdAt: at(1000),
    });
  });

  it('records the quarantine as the service’s own act, not a reporter’s', () => {
    const result = automaticQuarantine(post(), counting(4), at(1000));
    expect(result?.event).toEqual({
      type: 'post.moderated',
      projectSlug: 'garden',
      topicSlug: 'soil',
      subjectId: 'pst_1',
      data: { moderationActionId: result?.action.id, state: 'quarantined', reasonCode: 'spam', automatic: true },
      actor: null,
    });
  });

  it('refreshes the post listings and the post’s moderation history', () => {
    expect(automaticQuarantine(post(), counting(3), at(1000))?.touched).toEqual([
      'posts',
      'posts:garden',
      'thread:pst_root',
      'post-edits:garden',
      'moderation',
      'moderation:pst_1',
    ]);
  });

  it('leaves a post that is not visible as it is', () => {
    for (const state of ['quarantined', 'hidden', 'removed'] as const) {
      const target = post(state);
      expect(automaticQuarantine(target, counting(5), at(1000)), state).toBeNull();
      expect(target.moderationState).toBe(state);
    }
  });
});
