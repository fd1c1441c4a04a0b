import type { EntityManager } from '@mikro-orm/postgresql';
import { ANY_OF, distinct, insertRows, recordsOf, statement, type Statement } from '../../db/statements.ts';
import { Flag, type FlagReason } from '../../entities/flag.ts';
import { ModerationAction } from '../../entities/moderationAction.ts';
import { Post } from '../../entities/post.ts';
import { notFound } from '../../errors.ts';
import type { Command } from '../../pipeline/command.ts';
import { presentFlag } from '../../views/flag.ts';
import { presentPost } from '../../views/post.ts';
import { defineHotCommand, type LoadedRows } from '../hotCommand.ts';
import { requireActor } from '../types.ts';
import { automaticQuarantine, flagChange, isCounting } from './flagRules.ts';

export { QUARANTINE_REPORTERS } from './flagRules.ts';

export interface CreateFlagParams {
  postId: string;
  reasonCode: FlagReason;
  detail?: string;
}

const paramsOf = (command: Command) => command.data as unknown as CreateFlagParams;

/** The flagged posts, every flag on them, when a person last decided on each, and what the run changes. */
function load(em: EntityManager, rows: LoadedRows) {
  const flagsByPost = new Map<string, Flag[]>();
  for (const flag of recordsOf(em, Flag, rows.flags ?? [])) flagsByPost.set(flag.postId, [...(flagsByPost.get(flag.postId) ?? []), flag]);
  return {
    posts: new Map(recordsOf(em, Post, rows.posts ?? []).map((p) => [p.id, p])),
    flagsByPost,
    settled: new Map((rows.settled as { post_id: string; created_at: string }[]).map((s) => [s.post_id, new Date(s.created_at)])),
    inserted: new Map<string, Flag>(),
    updated: new Map<string, Flag>(),
    quarantined: new Map<string, Post>(),
    actions: [] as ModerationAction[],
  };
}
type State = ReturnType<typeof load>;

/** A flag written or renewed, and the post as it leaves it (quarantined, with its action, when it was the flag that tipped it). */
interface FlagWritten {
  kind: 'created' | 'updated';
  flag: Flag;
  post: Post;
  action: ModerationAction | null;
}

function writes(em: EntityManager, state: State, now: Date): Statement[] {
  const statements: Statement[] = [];
  if (state.inserted.size > 0) statements.push(insertRows(em, Flag, [...state.inserted.values()]));
  if (state.updated.size > 0) {
    statements.push(
      statement(
        'update flag f set reason_code = x.reason_code, detail = x.detail, active = true, updated_at = x.updated_at ' +
          'from json_to_recordset(?::json) as x(id text, reason_code text, detail text, updated_at timestamptz) where ' +
          'f.id = x.id',
        [
          JSON.stringify(
            [...state.updated.values()].map((f) => ({
              id: f.id,
              reason_code: f.reasonCode,
              detail: f.detail ?? null,
              updated_at: f.updatedAt,
            })),
          ),
        ],
      ),
    );
  }
  if (state.quarantined.size > 0) {
    statements.push(
      statement(
        "update post p set moderation_state = 'quarantined', moderation_reason = x.reason, updated_at = ? from " +
          'json_to_recordset(?::json) as x(id text, reason text) where p.id = x.id',
        [now, JSON.stringify([...state.quarantined.values()].map((p) => ({ id: p.id, reason: p.moderationReason })))],
      ),
    );
    statements.push(insertRows(em, ModerationAction, state.actions));
  }
  return statements;
}

/**
 * flag.create: one flag per reporter and post (./flagRules.ts); enough
 * distinct reporters quarantine a visible post, and the third reporter's
 * flag in one run quarantines it exactly as it would alone.
 */
export const createFlag = defineHotCommand<CreateFlagParams, State, FlagWritten>({
  type: 'flag.create',
  errors: ['not_found'],
  accepts: () => true,
  reads(commands) {
    const postIds = distinct(commands.map((c) => paramsOf(c).postId));
    return {
      posts: statement(`select * from post where id = ${ANY_OF}`, [postIds]),
      flags: statement(`select * from flag where post_id = ${ANY_OF}`, [postIds]),
      settled: statement(
        `select distinct on (post_id) post_id, created_at from moderation_action where post_id = ${ANY_OF} and ` +
          'actor_id is not null order by post_id, created_at desc, id desc',
        [postIds],
      ),
    };
  },
  load,
  decide(state, command, now) {
    const params = paramsOf(command);
    const loaded = state.posts.get(params.postId);
    if (!loaded) return { kind: 'refused', error: notFound(`post ${params.postId}`) };
    const reporter = requireActor(command.actor);
    const decidedAt = state.settled.get(loaded.id) ?? null;
    const flags = state.flagsByPost.get(loaded.id) ?? [];
    const existing = flags.find((f) => f.reporterId === reporter.agentId) ?? null;
    // The rules change the records they are given: copies, which evolve folds into the state.
    const post = { ...loaded };
    const change = flagChange({
      existing: existing && { ...existing },
      post,
      reporter,
      reasonCode: params.reasonCode,
      detail: params.detail ?? null,
      settled: decidedAt,
      now,
    });
    const body = () => ({ flag: presentFlag(change.flag, command.view), post: presentPost(post, command.view) });
    if (change.kind === 'unchanged') return { kind: 'applied', change: null, body: body(), events: [], touched: [], signals: [] };
    const counting = [...flags.filter((f) => f.id !== change.flag.id), change.flag].filter((f) => isCounting(f, decidedAt));
    const quarantine = automaticQuarantine(post, counting, now);
    return {
      kind: 'applied',
      change: { kind: change.kind, flag: change.flag, post, action: quarantine?.action ?? null },
      body: body(),
      events: quarantine ? [change.event, quarantine.event] : [change.event],
      touched: ['flags', `flags:${post.id}`, ...(quarantine?.touched ?? [])],
      signals: [],
    };
  },
  evolve(state, { kind, flag, post, action }) {
    state.flagsByPost.set(post.id, [...(state.flagsByPost.get(post.id) ?? []).filter((f) => f.id !== flag.id), flag]);
    state.posts.set(post.id, post);
    if (kind === 'created' || state.inserted.has(flag.id)) state.inserted.set(flag.id, flag);
    else state.updated.set(flag.id, flag);
    if (action) {
      state.quarantined.set(post.id, post);
      state.actions.push(action);
    }
  },
  writes,
});
