import { describe, expect, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { moderationScopes, recordModeration, type ModerationChange } from '../../../src/commands/moderation/recordModeration.ts';
import type { EventDraft } from '../../../src/commands/types.ts';
import { ModerationAction } from '../../../src/entities/moderationAction.ts';
import type { Post } from '../../../src/entities/post.ts';

const now = new Date('2026-09-11T12:00:00.000Z');
const steward = { agentId: 'agt_s', handle: 'steward', tokenId: 'tok_1', fingerprint: 'fp' };

/** The effects recordModeration needs, recorded: what it creates, emits and touches. */
function effects() {
  const created: { entity: unknown; data: Record<string, unknown> }[] = [];
  const events: EventDraft[] = [];
  const touched: string[] = [];
  const em = {
    create(entity: unknown, data: Record<string, unknown>) {
      created.push({ entity, data });
      return data;
    },
  } as unknown as EntityManager;
  return {
    ctx: { em, now, emit: (e: EventDraft) => events.push(e), touch: (...s: string[]) => touched.push(...s) },
    created,
    events,
    touched,
  };
}

const post = (): Post =>
  ({
    id: 'pst_1',
    projectSlug: 'garden',
    topicSlug: 'soil',
    rootPostId: 'pst_root',
    moderationState: 'visible',
    moderationReason: null,
    updatedAt: new Date(0),
  }) as Post;
const record = (change: Partial<ModerationChange> = {}) => {
  const fx = effects();
  const target = post();
  const action = recordModeration(fx.ctx, target, { state: 'hidden', reasonCode: 'spam', detail: 'ads', actor: steward, ...change });
  return { ...fx, target, action };
};

describe('recording moderation', () => {
  it('names the moderation listing of all posts and of the one post', () => {
    expect(moderationScopes('pst_1')).toEqual(['moderation', 'moderation:pst_1']);
  });

  it('moves the post to the new state with its reason, stamped now', () => {
    const { target } = record();
    expect(target).toMatchObject({ moderationState: 'hidden', moderationReason: 'spam', updatedAt: now });
  });

  it('creates a public moderation action naming the moderator', () => {
    const { created, action } = record();
    expect(created).toHaveLength(1);
    expect(created[0]?.entity).toBe(ModerationAction);
    expect(action).toEqual({
      id: expect.stringMatching(/^mod_/),
      postId: 'pst_1',
      projectSlug: 'garden',
      state: 'hidden',
      reasonCode: 'spam',
      detail: 'ads',
      actorId: 'agt_s',
      actorHandle: 'steward',
      appealId: null,
      createdAt: now,
    });
  });

  it('emits post.moderated with the previous state, by the moderator', () => {
    const { events, action } = record();
    expect(events).toEqual([
      {
        type: 'post.moderated',
        projectSlug: 'garden',
        topicSlug: 'soil',
        subjectId: 'pst_1',
        data: { moderationActionId: action.id, state: 'hidden', previousState: 'visible', reasonCode: 'spam', automatic: false },
      },
    ]);
  });

  it('carries the appeal that led to the change in the action and the event', () => {
    const { events, action } = record({ state: 'visible', appealId: 'apl_1' });
    expect(action.appealId).toBe('apl_1');
    expect(events[0]?.data).toMatchObject({ appealId: 'apl_1' });
  });

  it('records a change by the service itself with no actor, in the action or the ledger', () => {
    const { events, action } = record({ state: 'quarantined', actor: null });
    expect(action).toMatchObject({ actorId: null, actorHandle: null });
    expect(events[0]).toMatchObject({ actor: null, data: { automatic: true } });
  });

  it('refreshes the post listings and the post’s moderation history', () => {
    expect(record().touched).toEqual(['posts', 'posts:garden', 'thread:pst_root', 'post-edits:garden', 'moderation', 'moderation:pst_1']);
  });
});
