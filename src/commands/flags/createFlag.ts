import type { EntityManager } from '@mikro-orm/postgresql';
import { Flag, type FlagReason } from '../../entities/flag.ts';
import { ModerationAction } from '../../entities/moderationAction.ts';
import { presentFlag } from '../../views/flag.ts';
import { presentPost } from '../../views/post.ts';
import { postById } from '../posts/postLookup.ts';
import { defineCommand, ok } from '../types.ts';
import { automaticQuarantine, flagChange, isCounting } from './flagRules.ts';

export { QUARANTINE_REPORTERS } from './flagRules.ts';

export interface CreateFlagParams {
  postId: string;
  reasonCode: FlagReason;
  detail?: string;
}

/** When a person last decided on the post (a moderation set, an upheld appeal); flags before it were weighed by it. */
export async function settledAt(em: EntityManager, postId: string): Promise<Date | null> {
  const last = await em.findOne(ModerationAction, { postId, actorId: { $ne: null } }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  return last?.createdAt ?? null;
}

/**
 * One flag per reporter and post (src/commands/flags/flagRules.ts); enough
 * distinct reporters quarantine a visible post. The set-based twin for
 * batches is src/commands/batches/createFlags.ts.
 */
export const createFlag = defineCommand<CreateFlagParams>({
  type: 'flag.create',
  errors: ['not_found'],
  async handle({ em, params, view, now, actor, emit, touch }) {
    const reporter = actor();
    const post = await postById(em, params.postId);
    const existing = await em.findOne(Flag, { postId: post.id, reporterId: reporter.agentId });
    const settled = await settledAt(em, post.id);
    const change = flagChange({ existing, post, reporter, reasonCode: params.reasonCode, detail: params.detail ?? null, settled, now });
    if (change.kind === 'unchanged') return ok({ flag: presentFlag(change.flag, view), post: presentPost(post, view) });
    if (change.kind === 'created') em.create(Flag, change.flag);
    emit(change.event);
    // The counting flags below must include this one: flush the pending insert or update first.
    await em.flush();
    const counting = (await em.find(Flag, { postId: post.id, active: true })).filter((f) => isCounting(f, settled));
    const quarantine = automaticQuarantine(post, counting, now);
    if (quarantine) {
      em.create(ModerationAction, quarantine.action);
      emit(quarantine.event);
      touch(...quarantine.touched);
    }
    touch('flags', `flags:${post.id}`);
    return ok({ flag: presentFlag(change.flag, view), post: presentPost(post, view) });
  },
});
