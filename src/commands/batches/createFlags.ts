import { ANY_OF, insertRows, recordsOf, statement, distinct, type Statement } from '../../db/statements.ts';
import { Flag } from '../../entities/flag.ts';
import { ModerationAction } from '../../entities/moderationAction.ts';
import { Post } from '../../entities/post.ts';
import { notFound } from '../../errors.ts';
import type { Command } from '../../pipeline/command.ts';
import { presentFlag } from '../../views/flag.ts';
import { presentPost } from '../../views/post.ts';
import { createFlag, type CreateFlagParams } from '../flags/createFlag.ts';
import { automaticQuarantine, flagChange, isCounting } from '../flags/flagRules.ts';
import { requireActor } from '../types.ts';
import { refusal, type Decision, type SetBasedHandler } from './types.ts';

const paramsOf = (command: Command) => command.data as unknown as CreateFlagParams;

/** The flagged posts, every flag on them, and when a person last decided on each. */
function reads(commands: Command[]): Record<string, Statement> {
  const postIds = distinct(commands.map((c) => paramsOf(c).postId));
  return {
    posts: statement(`select * from post where id = ${ANY_OF}`, [postIds]),
    flags: statement(`select * from flag where post_id = ${ANY_OF}`, [postIds]),
    settled: statement(`select distinct on (post_id) post_id, created_at from moderation_action where post_id = ${ANY_OF} and actor_id is not null order by post_id, created_at desc, id desc`, [postIds]),
  };
}

/**
 * flag.create for a whole run: flagRules (src/commands/flags/flagRules.ts)
 * folded in order over the loaded posts and flags, so the third reporter's
 * flag in a batch quarantines the post exactly as it would alone.
 */
export const createFlags: SetBasedHandler = {
  type: createFlag.type,
  accepts: () => true,
  reads,
  decide(em, commands, rows, now) {
    const posts = new Map(recordsOf(em, Post, rows.posts ?? []).map((p) => [p.id, p]));
    const flagsByPost = new Map<string, Flag[]>();
    for (const flag of recordsOf(em, Flag, rows.flags ?? [])) flagsByPost.set(flag.postId, [...(flagsByPost.get(flag.postId) ?? []), flag]);
    const settled = new Map((rows.settled as { post_id: string; created_at: string }[]).map((s) => [s.post_id, new Date(s.created_at)]));
    const inserted = new Map<string, Flag>();
    const updated = new Map<string, Flag>();
    const quarantined = new Map<string, Post>();
    const actions: ModerationAction[] = [];
    const decisions = commands.map((command): Decision => {
      const params = paramsOf(command);
      const post = posts.get(params.postId);
      if (!post) return refusal(command, notFound(`post ${params.postId}`));
      const reporter = requireActor(command.actor);
      const flags = flagsByPost.get(post.id) ?? [];
      const decidedAt = settled.get(post.id) ?? null;
      const existing = flags.find((f) => f.reporterId === reporter.agentId) ?? null;
      const change = flagChange({ existing, post, reporter, reasonCode: params.reasonCode, detail: params.detail ?? null, settled: decidedAt, now });
      const result = () => ({ status: 200, body: { flag: presentFlag(change.flag, command.view), post: presentPost(post, command.view) } });
      if (change.kind === 'unchanged') return { command, result: result(), outcome: 'applied', events: [], touched: [] };
      if (change.kind === 'created') {
        flags.push(change.flag);
        flagsByPost.set(post.id, flags);
        inserted.set(change.flag.id, change.flag);
      } else if (!inserted.has(change.flag.id)) {
        updated.set(change.flag.id, change.flag);
      }
      const events = [change.event];
      const touched = ['flags', `flags:${post.id}`];
      const quarantine = automaticQuarantine(post, flags.filter((f) => isCounting(f, decidedAt)), now);
      if (quarantine) {
        quarantined.set(post.id, post);
        actions.push(quarantine.action);
        events.push(quarantine.event);
        touched.push(...quarantine.touched);
      }
      return { command, result: result(), outcome: 'applied', events, touched };
    });
    const writes: Statement[] = [];
    if (inserted.size > 0) writes.push(insertRows(em, Flag, [...inserted.values()]));
    if (updated.size > 0) {
      writes.push(
        statement('update flag f set reason_code = x.reason_code, detail = x.detail, active = true, updated_at = x.updated_at from json_to_recordset(?::json) as x(id text, reason_code text, detail text, updated_at timestamptz) where f.id = x.id', [
          JSON.stringify([...updated.values()].map((f) => ({ id: f.id, reason_code: f.reasonCode, detail: f.detail ?? null, updated_at: f.updatedAt }))),
        ]),
      );
    }
    if (quarantined.size > 0) {
      writes.push(
        statement("update post p set moderation_state = 'quarantined', moderation_reason = x.reason, updated_at = ? from json_to_recordset(?::json) as x(id text, reason text) where p.id = x.id", [
          now,
          JSON.stringify([...quarantined.values()].map((p) => ({ id: p.id, reason: p.moderationReason }))),
        ]),
      );
      writes.push(insertRows(em, ModerationAction, actions));
    }
    return { decisions, writes };
  },
};
